//go:build linux

package roofline

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used. Benchmarks
// report it beside wall time so that figures taken while other processes
// load the machine still say what the code costs. The kernel advances it
// in ticks (4 ms on the machines this project runs on), so it means
// something only over many iterations: a run of a few evaluations of a
// few milliseconds each reads 0, 4 or 8 ms.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLoop runs body b.N times on one locked OS thread and reports the
// thread's CPU time per iteration as "cpu-ns/op".
func cpuLoop(b *testing.B, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(n), "cpu-ns/op")
}
