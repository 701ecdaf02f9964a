package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// MaxWidth is the widest a table is drawn by default, in terminal
// columns: a wider one leaves out its optional columns (TableFit) until
// it fits, and says which in a line under it.
const MaxWidth = 120

// Wide wraps a table's writer to draw every column whatever the width
// (the CLI's --wide).
type Wide struct{ io.Writer }

// Table writes a table with the given header and rows.
func Table(w io.Writer, header []string, rows [][]string) error {
	return TableFit(w, header, rows, nil)
}

// TableFit writes a table with the given header and rows; when it is
// wider than MaxWidth (and w is not Wide) it leaves out the columns of
// optional, in that order, until it fits, and names them in a line under
// the table.
func TableFit(w io.Writer, header []string, rows [][]string, optional []int) error {
	_, wide := w.(Wide)
	keep := make([]bool, len(header))
	for i := range keep {
		keep[i] = true
	}
	var left []string
	for k := 0; ; k++ {
		var buf bytes.Buffer
		if err := render(&buf, pick(header, keep), pickRows(rows, keep)); err != nil {
			return err
		}
		if !wide && k == len(optional) && width(buf.String()) > MaxWidth {
			// Nothing more to leave out: break long headers over lines.
			buf.Reset()
			if err := render(&buf, wrapHeaders(pick(header, keep), pickRows(rows, keep)), pickRows(rows, keep)); err != nil {
				return err
			}
		}
		if wide || k == len(optional) || width(buf.String()) <= MaxWidth {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
			break
		}
		keep[optional[k]] = false
		left = append(left, header[optional[k]])
	}
	if len(left) > 0 {
		_, err := fmt.Fprintln(w, wrap(fmt.Sprintf("left out to fit %d columns: %s (--wide or --json shows them)", MaxWidth, strings.Join(left, ", ")), MaxWidth))
		return err
	}
	return nil
}

func pick(r []string, keep []bool) []string {
	out := make([]string, 0, len(r))
	for i, c := range r {
		if i >= len(keep) || keep[i] {
			out = append(out, c)
		}
	}
	return out
}

func pickRows(rows [][]string, keep []bool) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = pick(r, keep)
	}
	return out
}

// wrapHeaders breaks each header that is wider than its column's cells
// (and than 8 columns) into lines at spaces and after hyphens, each at most
// as wide as the cells, or as its longest piece.
func wrapHeaders(header []string, rows [][]string) []string {
	out := make([]string, len(header))
	for i, h := range header {
		cells := 8
		for _, r := range rows {
			if i < len(r) {
				cells = max(cells, runewidth.StringWidth(r[i]))
			}
		}
		out[i] = wrap(h, cells)
	}
	return out
}

// wrap breaks s into lines of at most limit columns at spaces and after
// hyphens and commas not followed by a space (a piece longer than limit
// stays whole).
func wrap(s string, limit int) string {
	if runewidth.StringWidth(s) <= limit {
		return s
	}
	type piece struct {
		text string
		glue bool // ends at a hyphen or comma: the next piece follows without a space
	}
	var pieces []piece
	start := 0
	for i, r := range s {
		if r == ' ' {
			pieces = append(pieces, piece{s[start:i], false})
			start = i + 1
		} else if r == '-' || r == ',' && !strings.HasPrefix(s[i+1:], " ") {
			pieces = append(pieces, piece{s[start : i+1], true})
			start = i + 1
		}
	}
	pieces = append(pieces, piece{s[start:], false})
	var lines []string
	cur, glue := "", false
	for _, p := range pieces {
		sep := " "
		if cur == "" || glue {
			sep = ""
		}
		if cur != "" && runewidth.StringWidth(cur+sep+p.text) > limit {
			lines = append(lines, cur)
			cur, sep = "", ""
		}
		cur += sep + p.text
		glue = p.glue
	}
	return strings.Join(append(lines, cur), "\n")
}

// width is the widest line of s in terminal columns.
func width(s string) int {
	m := 0
	for _, line := range strings.Split(s, "\n") {
		m = max(m, runewidth.StringWidth(line))
	}
	return m
}

func render(w io.Writer, header []string, rows [][]string) error {
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
