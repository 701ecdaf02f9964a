package profile

import (
	"io"
	"reflect"
	"testing"
)

// lineWriter hands on whole lines, "\n" kept, however the writes cut
// them; flush hands on the last one with a "\n" added, and nothing
// where every line was ended.
func TestLineWriter(t *testing.T) {
	for _, c := range []struct {
		writes []string
		want   []string
	}{
		{nil, nil},
		{[]string{"a\nb\n"}, []string{"a\n", "b\n"}},
		{[]string{"a", "b\nc", "\n"}, []string{"ab\n", "c\n"}},
		{[]string{"a\n\n", "tail"}, []string{"a\n", "\n", "tail\n"}},
		{[]string{"x\r\n"}, []string{"x\r\n"}},
	} {
		var got []string
		w := &lineWriter{line: func(l []byte) { got = append(got, string(l)) }}
		for _, s := range c.writes {
			if n, err := io.WriteString(w, s); n != len(s) || err != nil {
				t.Errorf("%q: write %q: %d, %v", c.writes, s, n, err)
			}
		}
		w.flush()
		w.flush() // a second flush hands on nothing more
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: lines %q, want %q", c.writes, got, c.want)
		}
	}
}
