package nn

import "unsafe"

// AddBias adds b (length cols) to every row of the rows x cols matrix x.
func AddBias[T Float](x []T, rows, cols int, b []T) {
	ParallelFor(rows, Grain(rows, cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := x[i*cols : i*cols+cols]
			for j := range r {
				r[j] += b[j]
			}
		}
	})
}

// ColSumAdd adds the column sums of the rows x cols matrix x to dst. The
// rows are summed in fixed chunks whose partials are added in order.
func ColSumAdd[T Float](dst []T, x []T, rows, cols int) {
	const chunk = 1024
	nc := (rows + chunk - 1) / chunk
	if nc <= 1 {
		for i := range rows {
			r := x[i*cols : i*cols+cols]
			for j, v := range r {
				dst[j] += v
			}
		}
		return
	}
	part := make([]T, nc*cols)
	ParallelFor(nc, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			p := part[c*cols : c*cols+cols]
			for i := c * chunk; i < min((c+1)*chunk, rows); i++ {
				r := x[i*cols : i*cols+cols]
				for j, v := range r {
					p[j] += v
				}
			}
		}
	})
	for c := range nc {
		p := part[c*cols : c*cols+cols]
		for j, v := range p {
			dst[j] += v
		}
	}
}

// ReLU applies max(x, 0) in place.
func ReLU[T Float](x []T) {
	ParallelFor(len(x), 1<<16, func(lo, hi int) {
		s := x[lo:hi]
		for i, v := range s {
			if v < 0 {
				s[i] = 0
			}
		}
	})
}

// ReLUBackward multiplies dy by the ReLU derivative taken from its output y
// (y > 0), in place.
func ReLUBackward[T Float](dy, y []T) {
	ParallelFor(len(dy), 1<<16, func(lo, hi int) {
		d, o := dy[lo:hi], y[lo:hi]
		for i := range d {
			if o[i] <= 0 {
				d[i] = 0
			}
		}
	})
}

// Add adds src to dst element-wise.
func Add[T Float](dst, src []T) {
	ParallelFor(len(dst), 1<<16, func(lo, hi int) {
		d, s := dst[lo:hi], src[lo:hi]
		for i := range d {
			d[i] += s[i]
		}
	})
}

// Transpose writes the transpose of the rows x cols matrix src (row
// stride lds) into dst (cols x rows, row stride ldd), through 16 x 16
// tiles so that reads and writes are both sequential runs.
func Transpose[T Float](dst []T, ldd int, src []T, lds, rows, cols int) {
	const tile = 16
	ParallelFor(rows, 256, func(lo, hi int) {
		var buf [tile][tile]T
		for r0 := lo; r0 < hi; r0 += tile {
			nr := min(tile, hi-r0)
			for j0 := 0; j0 < cols; j0 += tile {
				nc := min(tile, cols-j0)
				for i := range nr {
					row := src[(r0+i)*lds+j0 : (r0+i)*lds+j0+nc]
					for j, v := range row {
						buf[j][i] = v
					}
				}
				for j := range nc {
					copy(dst[(j0+j)*ldd+r0:(j0+j)*ldd+r0+nr], buf[j][:nr])
				}
			}
		}
	})
}

// Int32s returns n int32 values carved from the arena ar (whose element
// type is T), so that integer scratch is reused with the activations.
func Int32s[T Float](ar *Arena[T], n int) []int32 {
	var z T
	per := int(unsafe.Sizeof(z)) / 4
	buf := ar.AllocRaw((n + per - 1) / per)
	if len(buf) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&buf[0])), n)
}
