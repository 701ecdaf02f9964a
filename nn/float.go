package nn

import (
	"math"
	"unsafe"
)

// Float is the element type of the network: float32 (fast path) or float64
// (gradient checks).
type Float interface {
	float32 | float64
}

// is32 reports whether T is float32; it is a constant per instantiation.
func is32[T Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// Exp returns e**x; for float32 it uses a polynomial accurate to about 2 ulp.
func Exp[T Float](x T) T {
	if is32[T]() {
		return T(expf(float32(x)))
	}
	return T(math.Exp(float64(x)))
}

// expf is a Cephes-style single-precision exp: range reduction by ln 2 and
// a degree-6 polynomial on [-ln2/2, ln2/2]. It saturates to 0 below -87.3
// and to +Inf above 88.7.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	if x < -87.33654 {
		return 0
	}
	if x != x {
		return x
	}
	fn := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - fn*ln2hi - fn*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	n := int32(fn)
	if n < -126 { // subnormal results: scale in two steps
		return p * math.Float32frombits(uint32(n+127+64)<<23) * math.Float32frombits(uint32(127-64)<<23)
	}
	return p * math.Float32frombits(uint32(n+127)<<23)
}

// Log returns the natural logarithm of x.
func Log[T Float](x T) T { return T(math.Log(float64(x))) }

// Sqrt returns the square root of x.
func Sqrt[T Float](x T) T { return T(math.Sqrt(float64(x))) }

// Sigmoid returns 1/(1+e**-x), computed without overflow.
func Sigmoid[T Float](x T) T {
	if x >= 0 {
		return 1 / (1 + Exp(-x))
	}
	e := Exp(x)
	return e / (1 + e)
}

// Tanh returns the hyperbolic tangent of x.
func Tanh[T Float](x T) T {
	if !is32[T]() {
		return T(math.Tanh(float64(x)))
	}
	if x > 20 {
		return 1
	}
	if x < -20 {
		return -1
	}
	e := Exp(2 * x)
	return (e - 1) / (e + 1)
}

// Convert copies src into a new slice of element type T.
func Convert[T Float, S Float](src []S) []T {
	dst := make([]T, len(src))
	for i, v := range src {
		dst[i] = T(v)
	}
	return dst
}
