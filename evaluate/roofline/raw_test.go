package roofline

import "testing"

// TestRawViews: a raw view reads and writes the elements of its slice.
func TestRawViews(t *testing.T) {
	s := []inEdge{{1, 2}, {3, 4}, {5, 6}}
	r := rawOf(s)
	if e := *r.at(1); e != (inEdge{3, 4}) {
		t.Fatalf("at(1) = %v, want {3 4}", e)
	}
	r.at(2).p = 9
	if s[2].p != 9 {
		t.Fatalf("write through at(2): slice holds %v", s[2])
	}
}
