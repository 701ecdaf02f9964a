package heap

import "cmp"

// Push adds x to the heap h ordered by <.
func Push[S ~[]E, E cmp.Ordered](h *S, x E) {
	s := append(*h, x)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !(x < s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
	*h = s
}

// Pop removes and returns the least element of the heap h ordered by <.
// h must not be empty.
func Pop[S ~[]E, E cmp.Ordered](h *S) E {
	s := *h
	top := s[0]
	n := len(s) - 1
	x := s[n]
	var zero E
	s[n] = zero // drop the reference the slice's tail would keep (strings)
	s = s[:n]
	*h = s
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && s[r] < s[c] {
			c = r
		}
		if !(s[c] < x) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = x
	return top
}

// PushFunc adds x to the heap h ordered by less.
func PushFunc[S ~[]E, E any](h *S, x E, less func(a, b E) bool) {
	s := append(*h, x)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(x, s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
	*h = s
}

// PopFunc removes and returns the least element of the heap h ordered by
// less. h must not be empty.
func PopFunc[S ~[]E, E any](h *S, less func(a, b E) bool) E {
	s := *h
	top := s[0]
	n := len(s) - 1
	x := s[n]
	var zero E
	s[n] = zero // drop the reference the slice's tail would keep
	s = s[:n]
	*h = s
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && less(s[r], s[c]) {
			c = r
		}
		if !less(s[c], x) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = x
	return top
}
