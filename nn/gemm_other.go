//go:build !amd64

package nn

var haveAsm = false

func kern6x16(k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("nn: no assembly kernels on this architecture")
}

func expSum(x *float32, n int, scale, shift float32) float32 { panic("nn: no assembly kernels") }

func maxOf(x *float32, n int) float32 { panic("nn: no assembly kernels") }

func scale(x *float32, n int, a float32) { panic("nn: no assembly kernels") }

func maxSlot(a, z *float32, w *int32, n int, slot int32) { panic("nn: no assembly kernels") }

func addWhere(d, src *float32, w *int32, n int, slot int32) { panic("nn: no assembly kernels") }
