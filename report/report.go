package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Table writes a table with the given header and rows.
func Table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
	)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// KeyValue writes a two-column table of names and values.
func KeyValue(w io.Writer, rows [][2]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight}}),
	)
	for _, r := range rows {
		if err := t.Append([]string{r[0], r[1]}); err != nil {
			return err
		}
	}
	return t.Render()
}

// JSON writes v as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Seconds formats a duration in seconds with a unit that suits it.
func Seconds(s float64) string {
	a := math.Abs(s)
	switch {
	case s == 0:
		return "0"
	case math.IsInf(s, 0) || math.IsNaN(s):
		return fmt.Sprint(s)
	case a < 1e-3:
		return fmt.Sprintf("%.1f us", s*1e6)
	case a < 1:
		return fmt.Sprintf("%.3f ms", s*1e3)
	default:
		return fmt.Sprintf("%.3f s", s)
	}
}

// Bytes formats a size in bytes with a binary unit.
func Bytes(b int64) string {
	f := float64(b)
	switch a := math.Abs(f); {
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", f/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", f/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", f/(1<<10))
	default:
		return fmt.Sprintf("%d B", b)
	}
}

// Percent formats a fraction as a percentage.
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
