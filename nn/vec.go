package nn

// ExpSum sets x[i] = exp(x[i]*scale - shift) and returns the sum of the
// results (accumulated in T).
func ExpSum[T Float](x []T, scale, shift T) T {
	if is32[T]() && haveAsm {
		x32 := any(x).([]float32)
		n8 := len(x32) &^ 7
		var s float32
		if n8 > 0 {
			s = expSum(&x32[0], n8, float32(scale), float32(shift))
		}
		for i := n8; i < len(x32); i++ {
			e := expf(x32[i]*float32(scale) - float32(shift))
			x32[i] = e
			s += e
		}
		return T(s)
	}
	var s T
	for i, v := range x {
		e := Exp(v*scale - shift)
		x[i] = e
		s += e
	}
	return s
}

// Max returns the largest element of the non-empty x.
func Max[T Float](x []T) T {
	if is32[T]() && haveAsm && len(x) >= 8 {
		x32 := any(x).([]float32)
		n8 := len(x32) &^ 7
		m := maxOf(&x32[0], n8)
		for _, v := range x32[n8:] {
			m = max(m, v)
		}
		return T(m)
	}
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// Scale multiplies x by a.
func Scale[T Float](x []T, a T) {
	if is32[T]() && haveAsm {
		x32 := any(x).([]float32)
		n8 := len(x32) &^ 7
		if n8 > 0 {
			scale(&x32[0], n8, float32(a))
		}
		for i := n8; i < len(x32); i++ {
			x32[i] *= float32(a)
		}
		return
	}
	for i := range x {
		x[i] *= a
	}
}

// SoftmaxRow replaces the scores x by softmax(x*scale) and returns the
// log-sum-exp of x*scale.
func SoftmaxRow[T Float](x []T, scale T) T {
	m := Max(x)
	var shift T
	if scale >= 0 {
		shift = m * scale
	} else {
		shift = minOf(x) * scale
	}
	s := ExpSum(x, scale, shift)
	Scale(x, 1/s)
	return shift + Log(s)
}

func minOf[T Float](x []T) T {
	m := x[0]
	for _, v := range x {
		m = min(m, v)
	}
	return m
}

// MaxSlot sets a[i] = z[i] and w[i] = slot wherever z[i] > a[i]: one step
// of a max-pool that remembers which input won (the first on ties).
func MaxSlot[T Float](a, z []T, w []int32, slot int32) {
	i := 0
	if is32[T]() && haveAsm && len(a) >= 8 {
		a32, z32 := any(a).([]float32), any(z).([]float32)
		i = len(a) &^ 7
		_, _ = z32[i-1], w[i-1]
		maxSlot(&a32[0], &z32[0], &w[0], i, slot)
	}
	for ; i < len(a); i++ {
		if z[i] > a[i] {
			a[i], w[i] = z[i], slot
		}
	}
}

// AddWhere adds g[i] to d[i] wherever w[i] == slot.
func AddWhere[T Float](d, g []T, w []int32, slot int32) {
	i := 0
	if is32[T]() && haveAsm && len(d) >= 8 {
		d32, g32 := any(d).([]float32), any(g).([]float32)
		i = len(d) &^ 7
		_, _ = g32[i-1], w[i-1]
		addWhere(&d32[0], &g32[0], &w[0], i, slot)
	}
	for ; i < len(d); i++ {
		if w[i] == slot {
			d[i] += g[i]
		}
	}
}
