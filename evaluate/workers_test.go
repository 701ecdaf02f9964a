package evaluate

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestWorkers: every task runs once on 1 and on 4 goroutines, each
// goroutine's state made and released once; an error stops the loop and
// is returned; a cancelled context runs nothing.
func TestWorkers(t *testing.T) {
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		ran := make([]atomic.Int32, 100)
		var made, released atomic.Int32
		err := Workers(context.Background(), len(ran), func() (func(int) error, func()) {
			made.Add(1)
			return func(i int) error { ran[i].Add(1); return nil }, func() { released.Add(1) }
		})
		if err != nil {
			t.Fatalf("procs %d: %v", procs, err)
		}
		for i := range ran {
			if ran[i].Load() != 1 {
				t.Errorf("procs %d: task %d ran %d times", procs, i, ran[i].Load())
			}
		}
		if made.Load() != released.Load() || made.Load() < 1 || int(made.Load()) > procs {
			t.Errorf("procs %d: %d workers made, %d released", procs, made.Load(), released.Load())
		}
		boom := errors.New("boom")
		var after atomic.Int32
		err = Workers(context.Background(), 1000, func() (func(int) error, func()) {
			return func(i int) error {
				if i == 3 {
					return boom
				}
				if i > 3+procs {
					after.Add(1)
				}
				return nil
			}, nil
		})
		if !errors.Is(err, boom) || after.Load() > 0 && procs == 1 {
			t.Errorf("procs %d: %v, %d tasks after the error", procs, err, after.Load())
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var any atomic.Int32
		err = Workers(ctx, 10, func() (func(int) error, func()) {
			return func(int) error { any.Add(1); return nil }, nil
		})
		if !errors.Is(err, context.Canceled) || any.Load() != 0 {
			t.Errorf("procs %d: cancelled: %v, %d ran", procs, err, any.Load())
		}
		runtime.GOMAXPROCS(old)
	}
}
