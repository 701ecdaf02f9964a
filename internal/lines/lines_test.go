package lines

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestEach: blank lines are skipped and the others trimmed, each with its
// number in the file; the first error of each stops the reading.
func TestEach(t *testing.T) {
	stop := errors.New("stop")
	for _, c := range []struct {
		text    string
		stopAt  int // the line each fails on; 0: none
		want    []string
		wantErr error
	}{
		{"", 0, nil, nil},
		{"a\n\n  b  \n\t\nc", 0, []string{"1:a", "3:b", "5:c"}, nil},
		{"a\r\nb\r\n", 0, []string{"1:a", "2:b"}, nil},
		{"a\nb\nc\n", 2, []string{"1:a", "2:b"}, stop},
	} {
		var got []string
		err := Each(strings.NewReader(c.text), func(n int, text string) error {
			got = append(got, string(rune('0'+n))+":"+text)
			if n == c.stopAt {
				return stop
			}
			return nil
		})
		if !reflect.DeepEqual(got, c.want) || !errors.Is(err, c.wantErr) {
			t.Errorf("%q: %v, %v; want %v, %v", c.text, got, err, c.want, c.wantErr)
		}
	}
	// A line longer than 1 MiB is the scanner's error, not a silent stop.
	long := strings.Repeat("x", 1<<20+1)
	if err := Each(strings.NewReader(long), func(int, string) error { return nil }); err == nil {
		t.Error("a line over 1 MiB: no error")
	}
}
