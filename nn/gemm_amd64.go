package nn

import "golang.org/x/sys/cpu"

// haveAsm says that the AVX2/FMA kernels can run on this CPU.
var haveAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern6x16 sets or adds (acc != 0) the 6 x 16 block C = A B, with
// A[i,p] = a[i*rs + p*cs], B[p,j] = b[p*ldb + j], C[i,j] = c[i*ldc + j].
//
//go:noescape
func kern6x16(k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, acc int)

// expSum sets x[i] = exp(x[i]*scale - shift) for i < n (a multiple of 8)
// and returns their sum.
//
//go:noescape
func expSum(x *float32, n int, scale, shift float32) float32

// maxOf returns the largest of x[0:n], n a positive multiple of 8.
//
//go:noescape
func maxOf(x *float32, n int) float32

// scale multiplies x[0:n] by a, n a multiple of 8.
//
//go:noescape
func scale(x *float32, n int, a float32)

// maxSlot sets a[i] = z[i] and w[i] = slot where z[i] > a[i], i < n (a
// multiple of 8).
//
//go:noescape
func maxSlot(a, z *float32, w *int32, n int, slot int32)

// addWhere adds src[i] to d[i] where w[i] == slot, i < n (a multiple of 8).
//
//go:noescape
func addWhere(d, src *float32, w *int32, n int, slot int32)
