package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpSumAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 8, 9, 64, 131} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.Float64()*200 - 120) // includes underflow
		}
		x[0] = 0
		if n > 2 {
			x[1] = -200
			x[2] = 80
		}
		orig := append([]float32(nil), x...)
		s := ExpSum(x, 1.0, 0)
		want := 0.0
		for i, v := range orig {
			e := math.Exp(float64(v))
			if e < 1e-37 { // below float32's normal range
				if math.Abs(float64(x[i])-e) > 2e-38 {
					t.Fatalf("n=%d: exp(%v) = %v, want ~0", n, v, x[i])
				}
				continue
			}
			want += e
			if rel := math.Abs(float64(x[i])-e) / e; rel > 4e-7 {
				t.Fatalf("n=%d: exp(%v) = %v, want %v (rel %g)", n, v, x[i], e, rel)
			}
		}
		if rel := math.Abs(float64(s)-want) / want; rel > 1e-5 {
			t.Fatalf("n=%d: sum %v, want %v", n, s, want)
		}
	}
}

func TestExpfScalar(t *testing.T) {
	for x := float32(-87); x < 88; x += 0.37 {
		got, want := float64(expf(x)), math.Exp(float64(x))
		if rel := math.Abs(got-want) / want; rel > 4e-7 {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if expf(-100) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Fatal("expf does not saturate")
	}
}

func TestSoftmaxRow(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 5, 8, 23, 128} {
		x64 := make([]float64, n)
		for i := range x64 {
			x64[i] = r.Float64()*20 - 10
		}
		x32 := Convert[float32](x64)
		lse64 := SoftmaxRow(x64, 0.3)
		lse32 := SoftmaxRow(x32, 0.3)
		if math.Abs(float64(lse32)-lse64) > 1e-5 {
			t.Fatalf("n=%d: lse %v vs %v", n, lse32, lse64)
		}
		sum := 0.0
		for i := range x64 {
			sum += x64[i]
			if math.Abs(float64(x32[i])-x64[i]) > 1e-6 {
				t.Fatalf("n=%d: p[%d] = %v vs %v", n, i, x32[i], x64[i])
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("n=%d: probabilities sum to %v", n, sum)
		}
		if m := Max(x32); m != maxRef(x32) {
			t.Fatalf("Max = %v, want %v", m, maxRef(x32))
		}
	}
}

func maxRef(x []float32) float32 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func TestMaxSlotAndAddWhere(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{3, 8, 21, 128} {
		a := make([]float32, n)
		w := make([]int32, n)
		ref := make([]float32, n)
		refW := make([]int32, n)
		for s := int32(0); s < 4; s++ {
			z := make([]float32, n)
			for i := range z {
				z[i] = float32(r.IntN(5)) // ties happen
			}
			if s == 0 {
				copy(a, z)
				copy(ref, z)
				continue
			}
			MaxSlot(a, z, w, s)
			for i := range z {
				if z[i] > ref[i] {
					ref[i], refW[i] = z[i], s
				}
			}
		}
		for i := range a {
			if a[i] != ref[i] || w[i] != refW[i] {
				t.Fatalf("n=%d: [%d] = %v/%d, want %v/%d", n, i, a[i], w[i], ref[i], refW[i])
			}
		}
		d := make([]float32, n)
		g := make([]float32, n)
		for i := range g {
			g[i] = float32(i + 1)
		}
		AddWhere(d, g, w, 2)
		for i := range d {
			want := float32(0)
			if w[i] == 2 {
				want = g[i]
			}
			if d[i] != want {
				t.Fatalf("AddWhere[%d] = %v, want %v", i, d[i], want)
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {5, 17}, {70, 33}, {130, 125}} {
		rows, cols := sz[0], sz[1]
		src := make([]float32, rows*(cols+3))
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, cols*(rows+1))
		Transpose(dst, rows+1, src, cols+3, rows, cols)
		for r := range rows {
			for c := range cols {
				if dst[c*(rows+1)+r] != src[r*(cols+3)+c] {
					t.Fatalf("%dx%d: [%d,%d] wrong", rows, cols, r, c)
				}
			}
		}
	}
}

func TestArenaConsolidates(t *testing.T) {
	var a Arena[float32]
	for cycle := range 3 {
		m := a.Mark()
		x := a.Alloc(3 << 22)
		y := a.Alloc(5)
		x[0], y[4] = 1, 2
		a.Release(m)
		z := a.AllocRaw(7 << 21)
		_ = z
		a.Reset()
		if cycle > 0 && len(a.chunks) != 1 {
			t.Fatalf("cycle %d: %d chunks after Reset", cycle, len(a.chunks))
		}
	}
	if a.Cap() != 7<<21 {
		t.Fatalf("consolidated to %d elements, want the peak %d", a.Cap(), 7<<21)
	}
	b := a.Alloc(10)
	if len(b) != 10 || b[9] != 0 {
		t.Fatal("allocation after consolidation")
	}
}
