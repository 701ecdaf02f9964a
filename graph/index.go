package graph

import "hash/maphash"

// nameIndex finds ops by name: an open-addressing hash table of op
// indices that compares against the ops' own names, so that it holds no
// copy of them. A slot is the op index + 1 in the low 32 bits (0 = empty)
// and the name's hash in the high 32 bits (most misses never look at an
// op). At most half the slots are used. On a 2,000,000-op graph it takes
// 32 MiB, where a map[string]int took about 100.
type nameIndex struct {
	slots []uint64
	n     int
}

var indexSeed = maphash.MakeSeed()

// find returns the slot where name is, or the empty slot where it would
// go, and the op it holds (-1 when empty). eq compares op i's name with
// the one looked for.
func (x *nameIndex) find(h uint64, ops []Op, eq func(name string) bool) (slot, op int) {
	mask := uint64(len(x.slots) - 1)
	tag := h >> 32 << 32
	for s := h & mask; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return int(s), -1
		}
		if v&^0xffffffff == tag {
			if i := int(uint32(v)) - 1; eq(ops[i].Name) {
				return int(s), i
			}
		}
	}
}

// lookup returns the index of the op named name.
func (x *nameIndex) lookup(ops []Op, name string) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	_, i := x.find(maphash.String(indexSeed, name), ops, func(s string) bool { return s == name })
	return i, i >= 0
}

// lookupBytes is lookup for a name held as bytes.
func (x *nameIndex) lookupBytes(ops []Op, name []byte) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	_, i := x.find(maphash.Bytes(indexSeed, name), ops, func(s string) bool { return s == string(name) })
	return i, i >= 0
}

// add indexes ops[i] and reports whether its name was there already (the
// index then still finds the first op of that name).
func (x *nameIndex) add(ops []Op, i int) (dup bool) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(ops, max(16, 2*len(x.slots)))
	}
	name := ops[i].Name
	h := maphash.String(indexSeed, name)
	s, j := x.find(h, ops, func(s string) bool { return s == name })
	if j >= 0 {
		return true
	}
	x.slots[s] = h>>32<<32 | uint64(i+1)
	x.n++
	return false
}

// grow rehashes into size slots (a power of two).
func (x *nameIndex) grow(ops []Op, size int) {
	old := x.slots
	x.slots = make([]uint64, size)
	mask := uint64(size - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		h := maphash.String(indexSeed, ops[int(uint32(v))-1].Name)
		s := h & mask
		for x.slots[s] != 0 {
			s = (s + 1) & mask
		}
		x.slots[s] = v
	}
}

// reserve makes room for n names without growing.
func (x *nameIndex) reserve(ops []Op, n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size > len(x.slots) {
		x.grow(ops, size)
	}
}
