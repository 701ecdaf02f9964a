//go:build simcheck

package roofline

import "testing"

// TestRawChecked: in a simcheck build, a raw view refuses an index out of
// range instead of reading past its slice.
func TestRawChecked(t *testing.T) {
	r := rawOf([]int32{7, 8, 9})
	if got := *r.at(2); got != 9 {
		t.Fatalf("at(2) = %d, want 9", got)
	}
	for _, i := range []int{-1, 3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("at(%d) did not panic", i)
				}
			}()
			_ = r.at(i)
		}()
	}
}
