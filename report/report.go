package report

import (
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
// the table. When leaving out is not enough, the widest columns' cells
// and headers are broken over lines (fitColumns) until the table fits:
// at spaces and after commas, so that a plan string breaks between its
// keys, never inside a key or value.
func TableFit(w io.Writer, header []string, rows [][]string, optional []int) error {
	_, wide := w.(Wide)
	keep := make([]bool, len(header))
	for i := range keep {
		keep[i] = true
	}
	var left []string
	for k := 0; ; k++ {
		h, r := pick(header, keep), pickRows(rows, keep)
		if !wide && tableWidth(h, r) > MaxWidth && k == len(optional) {
			h, r = fitColumns(h, r, MaxWidth)
		}
		if wide || k == len(optional) || tableWidth(h, r) <= MaxWidth {
			if err := render(w, h, r); err != nil {
				return err
			}
			break
		}
		keep[optional[k]] = false
		left = append(left, header[optional[k]])
	}
	if len(left) > 0 {
		_, err := fmt.Fprintln(w, Wrap(fmt.Sprintf("left out to fit %d columns: %s (--wide or --json shows them)", MaxWidth, strings.Join(left, ", ")), MaxWidth))
		return err
	}
	return nil
}

// tableWidth is the width render draws header and rows at: each column
// its widest line plus a space either side and a rule, and the first rule.
func tableWidth(header []string, rows [][]string) int {
	n := 1
	for _, c := range columnWidths(header, rows) {
		n += c + 3
	}
	return n
}

// columnWidths is each column's widest line, header or cell.
func columnWidths(header []string, rows [][]string) []int {
	out := make([]int, len(header))
	for i, h := range header {
		out[i] = width(h)
		for _, r := range rows {
			if i < len(r) {
				out[i] = max(out[i], width(r[i]))
			}
		}
	}
	return out
}

// fitColumns breaks columns over lines (wrap: at spaces, after commas,
// after a name's hyphens) until the table is at most limit wide: first
// the headers wider than their cells, down to their cells' width, then
// the cells, the widest column first each time, down to each column's
// longest unbreakable piece.
func fitColumns(header []string, rows [][]string, limit int) ([]string, [][]string) {
	cur := columnWidths(header, rows)
	cells := columnWidths(make([]string, len(header)), rows)
	floor := make([]int, len(header))
	for i, h := range header {
		floor[i] = max(pieceWidth(h), 1)
		for _, r := range rows {
			if i < len(r) {
				floor[i] = max(floor[i], pieceWidth(r[i]))
			}
		}
	}
	total := 1
	for _, c := range cur {
		total += c + 3
	}
	for _, bound := range [][]int{cells, floor} {
		for total > limit {
			widest := -1
			for i := range cur {
				if cur[i] > max(bound[i], floor[i]) && (widest < 0 || cur[i] > cur[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break // nothing breaks further at this bound
			}
			cur[widest]--
			total--
		}
	}
	h := make([]string, len(header))
	for i := range header {
		h[i] = wrapLines(header[i], cur[i])
	}
	out := make([][]string, len(rows))
	for j, r := range rows {
		out[j] = make([]string, len(r))
		for i, c := range r {
			if i < len(cur) {
				c = wrapLines(c, cur[i])
			}
			out[j][i] = c
		}
	}
	return h, out
}

// wrapLines is wrap of each line of s.
func wrapLines(s string, limit int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Wrap(l, limit)
	}
	return strings.Join(lines, "\n")
}

// pieceWidth is the widest piece of s that wrap keeps whole.
func pieceWidth(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		for _, p := range strings.Split(Wrap(l, 1), "\n") {
			m = max(m, runewidth.StringWidth(p))
		}
	}
	return m
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

// Wrap breaks s into lines of at most limit columns at spaces, after
// commas not followed by a space, and after hyphens in words that hold no
// "=" (a piece longer than limit stays whole): a method's name breaks as
// go-scored-/no-learning, a plan string (tp=8,pp=6,recompute-layers=1)
// only between its keys, never inside a key or value, so that each line
// can be pasted back into --strategy.
func Wrap(s string, limit int) string {
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
		} else if r == ',' && !strings.HasPrefix(s[i+1:], " ") || r == '-' && !planWord(s, i) {
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

// planWord reports whether the space-delimited word of s around byte i
// holds a "=": a plan's key=value list, which breaks only at commas.
func planWord(s string, i int) bool {
	start := strings.LastIndexByte(s[:i], ' ') + 1
	end := strings.IndexByte(s[i:], ' ')
	if end < 0 {
		end = len(s) - i
	}
	return strings.Contains(s[start:i+end], "=")
}

// width is the widest line of s in terminal columns.
func width(s string) int {
	m := 0
	for _, line := range strings.Split(s, "\n") {
		m = max(m, runewidth.StringWidth(line))
	}
	return m
}

// render draws the table as it is: every line break in a cell is the
// caller's (TableFit, wrap), none tablewriter's own, which would break a
// plan string inside a key.
func render(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
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

// KeyValue writes a two-column table of names and values, at most
// MaxWidth wide unless w is Wide: a long value breaks over lines as
// TableFit's cells do.
func KeyValue(w io.Writer, rows [][2]string) error {
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = []string{r[0], r[1]}
	}
	if _, wide := w.(Wide); !wide && tableWidth([]string{"", ""}, cells) > MaxWidth {
		_, cells = fitColumns([]string{"", ""}, cells, MaxWidth)
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight}}),
	)
	for _, r := range cells {
		if err := t.Append(r); err != nil {
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
