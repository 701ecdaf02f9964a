package alloc

import (
	"errors"
	"math/rand/v2"
	"testing"
)

const mib = 1 << 20

// op is one step of a hand-written case: Malloc of size on stream
// (naming the tensor id), or Free of id.
type op struct {
	id     int32
	size   int64
	stream int32
	free   bool
}

func m(id int32, size int64) op           { return op{id: id, size: size} }
func ms(id int32, size int64, s int32) op { return op{id: id, size: size, stream: s} }
func f(id int32) op                       { return op{id: id, free: true} }

func trace(ops []op) []Event {
	var t []Event
	for _, o := range ops {
		t = append(t, Event{Tensor: o.id, Stream: o.stream, Free: o.free, Size: o.size})
	}
	return t
}

// TestAllocatorCases: each case's reserved and allocated worked by hand
// from the rules the package comment cites.
func TestAllocatorCases(t *testing.T) {
	cases := []struct {
		name       string
		cfg        Config
		ops        []op
		alloc, res int64 // at the end
		peakRes    int64
		retries    int
		oom        bool
		needed     int64 // out of memory: held after the release, and the request
	}{
		// 1000 B rounds to 1,024 in a 2 MiB small segment.
		{name: "small rounded", ops: []op{m(0, 1000)}, alloc: 1024, res: 2 * mib, peakRes: 2 * mib},
		// Two 1 MiB requests share one 2 MiB segment (the first split,
		// 1 MiB left >= 512 B; the second takes it whole); a third needs
		// another segment.
		{name: "small packed", ops: []op{m(0, mib), m(1, mib), m(2, mib)}, alloc: 3 * mib, res: 4 * mib, peakRes: 4 * mib},
		// Just over 1 MiB: large pool, 20 MiB segment (under 10 MiB), split;
		// 5 MiB more comes from the remainder.
		{name: "20 MiB segment", ops: []op{m(0, mib+1), m(1, 5*mib)}, alloc: mib + 512 + 5*mib, res: 20 * mib, peakRes: 20 * mib},
		// 12 MiB + 1 B: 12 MiB + 512 in a segment rounded to 14 MiB;
		// the 2 MiB - 512 left is over 1 MiB: split, counted free.
		{name: "large rounded, split", ops: []op{m(0, 12*mib+1)}, alloc: 12*mib + 512, res: 14 * mib, peakRes: 14 * mib},
		// 11 MiB in a 12 MiB segment: 1 MiB left is not over 1 MiB: not
		// split, the whole block counted allocated.
		{name: "large unsplit", ops: []op{m(0, 11*mib)}, alloc: 12 * mib, res: 12 * mib, peakRes: 12 * mib},
		// Expandable: 11 MiB maps one 20 MiB page; the remainder is split.
		{name: "expandable page", cfg: Config{Expandable: true}, ops: []op{m(0, 11*mib)}, alloc: 11 * mib, res: 20 * mib, peakRes: 20 * mib},
		// Expandable: a small request maps a 2 MiB page, 21 MiB two 20 MiB
		// pages of the large pool's segment.
		{name: "expandable pools", cfg: Config{Expandable: true}, ops: []op{m(0, 1024), m(1, 21*mib)}, alloc: 1024 + 21*mib, res: 42 * mib, peakRes: 42 * mib},
		// Two 4 MiB blocks of one 20 MiB segment freed merge back into it:
		// 18 MiB then fits without a new segment.
		{name: "merge", ops: []op{m(0, 4*mib), m(1, 4*mib), f(0), f(1), m(2, 18*mib)}, alloc: 18 * mib, res: 20 * mib, peakRes: 20 * mib},
		// Without the merge of both neighbours: free the middle one only,
		// and 18 MiB needs a segment of its own.
		{name: "no merge past a block in use", ops: []op{m(0, 4*mib), m(1, 4*mib), m(3, 4*mib), f(1), m(2, 18*mib)}, alloc: 8*mib + 18*mib, res: 38 * mib, peakRes: 38 * mib},
		// A freed 30 MiB segment cannot hold 40 MiB: both stay reserved.
		{name: "fragmentation", ops: []op{m(0, 30*mib), f(0), m(1, 40*mib)}, alloc: 40 * mib, res: 70 * mib, peakRes: 70 * mib},
		// Expandable: 30 MiB maps two pages (40 MiB), freed, and 40 MiB
		// fits the same pages.
		{name: "fragmentation, expandable", cfg: Config{Expandable: true}, ops: []op{m(0, 30*mib), f(0), m(1, 40*mib)}, alloc: 40 * mib, res: 40 * mib, peakRes: 40 * mib},
		// 64 MiB device: 40 MiB more than the free 30 MiB segment would
		// exceed it; the cache is released (the 30 MiB segment) and the
		// request tried again.
		{name: "oom, release, retry", cfg: Config{Capacity: 64 * mib}, ops: []op{m(0, 30*mib), f(0), m(1, 40*mib)}, alloc: 40 * mib, res: 40 * mib, peakRes: 40 * mib, retries: 1},
		// The same with the 30 MiB still held: out of memory, 30 + 40 MiB
		// needed at that instant.
		{name: "oom", cfg: Config{Capacity: 64 * mib}, ops: []op{m(0, 30*mib), m(1, 40*mib)}, alloc: 30 * mib, res: 30 * mib, peakRes: 30 * mib, retries: 1, oom: true, needed: 70 * mib},
		// Expandable, 60 MiB device: A 30 MiB and B 10 MiB fill two pages;
		// A freed; C 35 MiB would map two pages more (80 MiB): refused,
		// the free page [0, 20) is unmapped ([20, 30) shares a page with
		// B and stays), then C maps two pages after B: 20 + 40 = 60.
		{name: "expandable oom unmaps", cfg: Config{Expandable: true, Capacity: 60 * mib},
			ops: []op{m(0, 30*mib), m(1, 10*mib), f(0), m(2, 35*mib)}, alloc: 45 * mib, res: 60 * mib, peakRes: 60 * mib, retries: 1},
		// A block freed on stream 0 is not reused by stream 1.
		{name: "streams", ops: []op{ms(0, 4*mib, 0), f(0), ms(1, 4*mib, 1)}, alloc: 4 * mib, res: 40 * mib, peakRes: 40 * mib},
		// Best fit: 12 MiB (a segment of its own) and 6 MiB (a 20 MiB
		// segment, split) freed leave free blocks of 12 and 20 MiB; 5 MiB
		// takes the 12 MiB one (split: 7 MiB left), 11 MiB then the 20
		// MiB one, not the 7.
		{name: "best fit", ops: []op{m(0, 12*mib), m(1, 6*mib), f(0), f(1), m(2, 5*mib), m(3, 11*mib)}, alloc: 16 * mib, res: 32 * mib, peakRes: 32 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := Replay(c.cfg, trace(c.ops))
			if c.oom != errors.Is(err, ErrOutOfMemory) {
				t.Fatalf("err %v, want out of memory %v", err, c.oom)
			}
			if !c.oom && err != nil {
				t.Fatal(err)
			}
			if st.Needed != c.needed {
				t.Errorf("needed %d, want %d", st.Needed, c.needed)
			}
			if st.Allocated != c.alloc || st.Reserved != c.res || st.PeakReserved != c.peakRes || st.Retries != c.retries {
				t.Errorf("allocated %d reserved %d peak reserved %d retries %d; want %d %d %d %d",
					st.Allocated, st.Reserved, st.PeakReserved, st.Retries, c.alloc, c.res, c.peakRes, c.retries)
			}
		})
	}
}

// check verifies a's books: every segment's blocks tile it, the free
// lists hold exactly the free blocks, and Reserved and Allocated are
// the mapped and the in-use blocks' bytes.
func check(t *testing.T, a *Allocator) {
	t.Helper()
	live := map[int32]bool{}
	for i := range a.blocks {
		live[int32(i)] = true
	}
	for _, i := range a.spare {
		delete(live, i)
	}
	inFree := map[int32]bool{}
	for _, p := range a.pools {
		for k, i := range p.free {
			inFree[i] = true
			if k > 0 {
				x, y := a.blocks[p.free[k-1]], a.blocks[i]
				if x.size > y.size || x.size == y.size && x.addr >= y.addr {
					t.Fatalf("free list out of order")
				}
			}
		}
	}
	var mapped, used int64
	for i := range live {
		b := a.blocks[i]
		if b.next >= 0 && a.blocks[b.next].addr != b.addr+b.size {
			t.Fatalf("block %d does not end where its next begins", i)
		}
		if b.prev >= 0 && a.blocks[b.prev].next != i {
			t.Fatalf("block %d's prev does not point back", i)
		}
		if b.mapped {
			mapped += b.size
		}
		if b.allocated {
			used += b.size
		}
		if inFree[i] != (b.mapped && !b.allocated) {
			t.Fatalf("block %d: in the free list %v, mapped %v, allocated %v", i, inFree[i], b.mapped, b.allocated)
		}
	}
	if mapped != a.st.Reserved || used != a.st.Allocated {
		t.Fatalf("mapped %d allocated %d; stats %d %d", mapped, used, a.st.Reserved, a.st.Allocated)
	}
}

// randomTrace is n events over up to 64 live tensors of sizes from 1 B
// to 64 MiB, most of them freed again.
func randomTrace(r *rand.Rand, n int, streams int32) []Event {
	var t []Event
	var live []int32
	next := int32(0)
	for len(t) < n {
		if len(live) > 0 && (len(live) >= 64 || r.IntN(5) < 2) {
			k := r.IntN(len(live))
			t = append(t, Event{Tensor: live[k], Free: true})
			live = append(live[:k], live[k+1:]...)
			continue
		}
		size := int64(1) << r.IntN(27)
		size += r.Int64N(size)
		t = append(t, Event{Tensor: next, Size: size, Stream: r.Int32N(streams)})
		live = append(live, next)
		next++
	}
	return t
}

// TestAllocatorProperties: on random traces, with and without expandable
// segments, with and without a capacity, after every event the books
// hold (check), reserved >= allocated >= requested, and without a
// capacity reserved never falls (nothing is released unless the device
// refuses). A capacity at least the unlimited run's peak reserved gives
// the same figures.
func TestAllocatorProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 60 {
		tr := randomTrace(r, 600, int32(1+k%3))
		for _, exp := range []bool{false, true} {
			free, err := Replay(Config{Expandable: exp}, tr)
			if err != nil {
				t.Fatal(err)
			}
			for _, capacity := range []int64{0, free.PeakReserved, free.PeakReserved * 2 / 3} {
				a := New(Config{Expandable: exp, Capacity: capacity})
				h := map[int32]int32{}
				var last int64
				for _, e := range tr {
					if e.Free {
						if err := a.Free(h[e.Tensor]); err != nil {
							t.Fatal(err)
						}
					} else {
						b, err := a.Malloc(e.Size, e.Stream)
						if errors.Is(err, ErrOutOfMemory) && capacity > 0 && capacity < free.PeakReserved {
							break
						}
						if err != nil {
							t.Fatalf("trace %d expandable %v capacity %d: %v", k, exp, capacity, err)
						}
						h[e.Tensor] = b
					}
					check(t, a)
					st := a.Stats()
					if st.Reserved < st.Allocated || st.Allocated < st.Requested {
						t.Fatalf("reserved %d allocated %d requested %d", st.Reserved, st.Allocated, st.Requested)
					}
					if capacity == 0 && st.Reserved < last {
						t.Fatalf("reserved fell from %d to %d without a capacity", last, st.Reserved)
					}
					if capacity > 0 && st.Reserved > capacity {
						t.Fatalf("reserved %d over the capacity %d", st.Reserved, capacity)
					}
					last = st.Reserved
				}
				if capacity == free.PeakReserved {
					if st := a.Stats(); st != free {
						t.Fatalf("capacity of the peak: %+v, unlimited %+v", st, free)
					}
				}
			}
		}
	}
}

func TestReplayErrors(t *testing.T) {
	for _, tr := range [][]Event{
		{{Tensor: 0, Free: true}},
		{{Tensor: 0, Size: 1}, {Tensor: 0, Size: 1}},
		{{Tensor: -1, Size: 1}},
		{{Tensor: 0, Size: -1}},
	} {
		if _, err := Replay(Config{}, tr); err == nil {
			t.Errorf("%v: no error", tr)
		}
	}
}

// BenchmarkReplay: 100,000 events, with and without expandable segments.
func BenchmarkReplay(b *testing.B) {
	tr := randomTrace(rand.New(rand.NewPCG(3, 4)), 100_000, 2)
	for _, exp := range []bool{false, true} {
		name := "segments"
		if exp {
			name = "expandable"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Replay(Config{Expandable: exp}, tr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
