package report

import (
	"bytes"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// lines wraps the prose a table writer prints around its tables: a line
// wider than MaxWidth is broken at spaces, its continuations indented by
// two. Table lines (drawn at most MaxWidth wide unless the writer is Wide)
// pass as they are; a Wide writer gets everything as it is.
type lines struct {
	w   io.Writer
	buf []byte
	err error
}

// FitLines is fitLines for writers outside this package that print
// prose beside its tables: lines wider than MaxWidth broken at spaces
// unless w is Wide.
func FitLines(w io.Writer) (io.Writer, func() error) { return fitLines(w) }

// fitLines returns the writer a table writer prints through, and the
// function that writes what is left of a last line without a newline.
func fitLines(w io.Writer) (io.Writer, func() error) {
	if _, wide := w.(Wide); wide {
		return w, func() error { return nil }
	}
	l := &lines{w: w}
	return l, l.flush
}

func (l *lines) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if _, l.err = io.WriteString(l.w, WrapLine(line, MaxWidth)+"\n"); l.err != nil {
			return 0, l.err
		}
	}
	return len(p), nil
}

func (l *lines) flush() error {
	if l.err != nil || len(l.buf) == 0 {
		return l.err
	}
	_, l.err = io.WriteString(l.w, WrapLine(string(l.buf), MaxWidth))
	l.buf = nil
	return l.err
}

// WrapLine breaks line at spaces into lines of at most limit columns,
// continuations indented by two; a word longer than that stays whole.
func WrapLine(line string, limit int) string {
	if runewidth.StringWidth(line) <= limit || strings.ContainsAny(line, "│┌├└") {
		return line
	}
	var out []string
	cur := ""
	for _, word := range strings.Split(line, " ") {
		switch {
		case cur == "":
			cur = word
		case runewidth.StringWidth(cur+" "+word) > limit:
			out = append(out, cur)
			cur = "  " + word
		default:
			cur += " " + word
		}
	}
	return strings.Join(append(out, cur), "\n")
}
