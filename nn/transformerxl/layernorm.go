package transformerxl

import (
	"github.com/placer/placer/nn"
)

// LayerNorm normalizes each row to zero mean and unit variance and applies
// a learned gain and bias: y = g ⊙ (x - mean) / sqrt(var + eps) + b.
type LayerNorm[T nn.Float] struct {
	Dim  int
	Eps  T
	Gain *nn.Param[T] // 1 x Dim, starts at 1
	Bias *nn.Param[T] // 1 x Dim, starts at 0
}

// NewLayerNorm returns a layer norm over rows of dim features.
func NewLayerNorm[T nn.Float](name string, dim int) *LayerNorm[T] {
	l := &LayerNorm[T]{Dim: dim, Eps: 1e-5, Gain: nn.NewParam[T](name+".g", 1, dim), Bias: nn.NewParam[T](name+".b", 1, dim)}
	l.Gain.Fill(1)
	return l
}

// Params lists the parameters.
func (l *LayerNorm[T]) Params() nn.Params[T] { return nn.Params[T]{l.Gain, l.Bias} }

// LNCache is what LayerNorm.Backward needs.
type LNCache[T nn.Float] struct {
	rows int
	xhat []T // rows x Dim
	rstd []T // rows
}

// Forward normalizes the rows x Dim matrix x into y (overwritten).
func (l *LayerNorm[T]) Forward(ar *nn.Arena[T], x []T, rows int, y []T) *LNCache[T] {
	d := l.Dim
	c := &LNCache[T]{rows: rows, xhat: ar.AllocRaw(rows * d), rstd: ar.AllocRaw(rows)}
	g, b := l.Gain.W, l.Bias.W
	nn.ParallelFor(rows, nn.Grain(rows, 8*d), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xr := x[i*d : (i+1)*d]
			mean := sum4(xr) / T(d)
			vs := sqdev4(xr, mean)
			rstd := 1 / nn.Sqrt(vs/T(d)+l.Eps)
			c.rstd[i] = rstd
			xh := c.xhat[i*d : (i+1)*d]
			yr := y[i*d : (i+1)*d]
			for j, v := range xr {
				h := (v - mean) * rstd
				xh[j] = h
				yr[j] = g[j]*h + b[j]
			}
		}
	})
	return c
}

// Backward takes dy and adds the gradients of the gain, the bias and the
// input dx.
func (l *LayerNorm[T]) Backward(c *LNCache[T], dy, dx []T) {
	d, rows := l.Dim, c.rows
	g := l.Gain.W
	const chunk = 1024
	nc := (rows + chunk - 1) / chunk
	part := make([]T, nc*2*d)
	nn.ParallelFor(nc, 1, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			pg := part[ch*2*d : ch*2*d+d]
			pb := part[ch*2*d+d : (ch+1)*2*d]
			for i := ch * chunk; i < min((ch+1)*chunk, rows); i++ {
				dyr := dy[i*d : (i+1)*d]
				xh := c.xhat[i*d : (i+1)*d]
				var m1, m2 T
				for j, v := range dyr {
					pg[j] += v * xh[j]
					pb[j] += v
					dh := v * g[j]
					m1 += dh
					m2 += dh * xh[j]
				}
				m1 /= T(d)
				m2 /= T(d)
				rstd := c.rstd[i]
				dxr := dx[i*d : (i+1)*d]
				for j, v := range dyr {
					dxr[j] += rstd * (v*g[j] - m1 - xh[j]*m2)
				}
			}
		}
	})
	for ch := range nc {
		for j := range d {
			l.Gain.G[j] += part[ch*2*d+j]
			l.Bias.G[j] += part[ch*2*d+d+j]
		}
	}
}

// sum4 sums x with four accumulators (the adds then pipeline).
func sum4[T nn.Float](x []T) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sqdev4 is the sum of (x - m)^2 with four accumulators.
func sqdev4[T nn.Float](x []T, m T) T {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a, b, c, d := x[i]-m, x[i+1]-m, x[i+2]-m, x[i+3]-m
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(x); i++ {
		a := x[i] - m
		s0 += a * a
	}
	return (s0 + s1) + (s2 + s3)
}
