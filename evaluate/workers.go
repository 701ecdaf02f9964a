package evaluate

import (
	"context"
	"runtime"
	"sync"
)

// Workers runs tasks 0 .. n-1 on up to GOMAXPROCS goroutines, each taking
// the next task: the parallel loop of an EvaluateBatch. worker is called
// once per goroutine and returns what runs one task there (with the
// goroutine's own state: a simulator from a pool, say) and what to do when
// the goroutine is done (nil: nothing). The first error, ctx's included,
// stops the loop and is returned. With one goroutine the tasks run in
// order on the caller's.
func Workers(ctx context.Context, n int, worker func() (run func(i int) error, done func())) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		run, done := worker()
		if done != nil {
			defer done()
		}
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := run(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return -1
		}
		next++
		return next - 1
	}
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, done := worker()
			if done != nil {
				defer done()
			}
			for i := take(); i >= 0; i = take() {
				err := ctx.Err()
				if err == nil {
					err = run(i)
				}
				if err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
