package alloc

import "testing"

// TestGarbageCollection works garbage_collect_cached_blocks by hand on
// a device of 100 MiB, a fraction of 0.5 (50 MiB allowed) and a
// threshold of 0.8 (40 MiB). Three 12 MiB tensors on stream 0 (A, B, C:
// a segment each, 36 MiB reserved, three get_free_block calls on the
// large pools); A freed (its age counted from call 3); a 12 MiB tensor
// on stream 1 (call 4: no free block of its stream, 36 <= 40, no
// collection: 48 reserved); B freed (from call 4); a 14 MiB tensor on
// stream 0 (call 5): no free block holds it, 48 > 40, 8 MiB to reclaim;
// A is 2 calls old, B 1, the mean 1.5: A alone is released (12 >= 8),
// and the 14 MiB segment makes 36 + 14 = 50 MiB. Without a collection
// the 14 MiB would not fit the 50 MiB allowed (48 + 14): the cache
// would be released whole (A and B) and 24 + 14 = 38 MiB reserved.
func TestGarbageCollection(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name             string
		cfg              Config
		reserved, peak   int64
		retries          int
		freeLeftAfterRun int
	}{
		{"threshold and fraction", Config{Device: 100 * mib, Fraction: 0.5, GCThreshold: 0.8}, 50 * mib, 50 * mib, 0, 1},
		{"fraction alone", Config{Device: 100 * mib, Fraction: 0.5}, 38 * mib, 48 * mib, 1, 0},
		// PyTorch ignores the threshold without a fraction: nothing
		// bounds the reservation, nothing is collected.
		{"threshold alone", Config{Device: 100 * mib, GCThreshold: 0.8}, 62 * mib, 62 * mib, 0, 2},
	} {
		a := New(c.cfg)
		must := func(h int32, err error) int32 {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return h
		}
		ha := must(a.Malloc(12*mib, 0))
		hb := must(a.Malloc(12*mib, 0))
		must(a.Malloc(12*mib, 0))
		if err := a.Free(ha); err != nil {
			t.Fatal(err)
		}
		must(a.Malloc(12*mib, 1))
		if err := a.Free(hb); err != nil {
			t.Fatal(err)
		}
		must(a.Malloc(14*mib, 0))
		st := a.Stats()
		if st.Reserved != c.reserved || st.PeakReserved != c.peak || st.Retries != c.retries {
			t.Errorf("%s: reserved %d MiB (peak %d, %d releases), want %d MiB (peak %d, %d)", c.name,
				st.Reserved/mib, st.PeakReserved/mib, st.Retries, c.reserved/mib, c.peak/mib, c.retries)
		}
		free := 0
		for _, p := range a.pools {
			free += len(p.free)
		}
		if free != c.freeLeftAfterRun {
			t.Errorf("%s: %d free blocks cached, want %d", c.name, free, c.freeLeftAfterRun)
		}
	}
}
