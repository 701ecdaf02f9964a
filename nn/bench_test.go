package nn

import "testing"

func BenchmarkKernel(b *testing.B) {
	if !haveAsm {
		b.Skip("no asm")
	}
	a := make([]float32, 6*256)
	bb := make([]float32, 256*16)
	c := make([]float32, 6*16)
	for b.Loop() {
		kern6x16(256, &a[0], 1, 6, &bb[0], 16, &c[0], 16, 1)
	}
	b.ReportMetric(float64(2*6*16*256)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

func BenchmarkTranspose(b *testing.B) {
	rows, cols, ld := 84000, 125, 375
	src := make([]float32, rows*ld)
	dst := make([]float32, rows*cols)
	for b.Loop() {
		Transpose(dst, rows, src[125:], ld, rows, cols)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*cols), "ns/elem")
}
