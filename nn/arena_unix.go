//go:build unix

package nn

import (
	"syscall"
	"unsafe"
)

// mapChunk returns n zeroed elements in an anonymous private mapping and
// the function that unmaps them, or a heap slice and nil if mapping fails.
// E has no pointers (Float), so the collector need not see the memory.
func mapChunk[E Float](n int) ([]E, func()) {
	var z E
	size := n * int(unsafe.Sizeof(z))
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]E, n), nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(&b[0])), n), func() { syscall.Munmap(b) }
}
