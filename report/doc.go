// Package report is how placer writes what it finds, for people and
// programs, the same way for both of its products: tables (tablewriter)
// fitted to MaxWidth columns (Table, TableFit, KeyValue, FitLines, Wrap),
// their JSON twins (JSON), units (Seconds, Bytes, Percent), line and bar
// plots (WritePlot, WriteBarPlot: gonum/plot) and a progress bar on the
// terminal (Progress); and the one table that lists both products'
// workloads, `placer workloads list`'s (workloads.go). The other tables
// are the products': the cluster planner's in report/plans, the op-level
// placer's in report/placements; both import this package, which
// imports neither.
//
// May import: internal/...
package report
