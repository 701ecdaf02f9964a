// Package calibration is the error placer states beside each figure of a
// cluster-scale plan, calibrated on the bench's development part
// (planner/bench): every MLPerf submission of the development
// rounds and every row of the development part's published sweeps is
// predicted by the model as it stands (computed in the process, never
// stored, so the stated error follows the model), each row put in its
// regime (RegimeOf: facts the plan has, defined before any error was
// looked at), and a regime's stated error is a quantile of the |error|
// of its rows (Quantile, StatedLevel). Where a regime has too few rows for
// the quantile, the error is the nearest coarser regime's, or the whole
// development part's, and says so (Table.ForRegime). Coverage checks that the
// stated error holds on rows it was not computed from: leave one sweep
// out on the development part, the development part's table on the
// validation part (aggregate only).
//
// May import: planner, planner/bench, planner/plan, planner/published, graph/transformer
package calibration
