package planner

import (
	"slices"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestCPUPodFigures: a CPU profile's pod states what a CPU process has.
// The profile (cpuProfile: 6e9 bytes a process) times the tiny model's
// layer at mbs 1 in 4 + 8 ms and at mbs 4 in 8 + 16 ms, twice as fast a
// token: the pod's roofline rate is the first layer's (6 FLOPs a
// parameter a token over its time), so an MFU taken against it exceeds
// 100% for every plan here (214.5%, 210.4%, 111.9% before CPU pods had
// none): at mbs 4 the step runs its layers twice as fast as that
// "peak", and at mbs 1 the model's FLOPs count the attention's scores
// and the logits, which the rate leaves out. Hand-computed, for each
// plan:
//   - no MFU (0: the profile measured no peak of the CPU);
//   - the model FLOP/s a process: ModelFLOPs over the step and the
//     processes;
//   - the memory a process has: the profile's 6e9 bytes (no 6 GiB kept
//     for a CUDA context), usable all 6e9 at the default margin (0),
//     and among the parts no CUDA context and no NCCL buffers.
func TestCPUPodFigures(t *testing.T) {
	const model = "llama:layers=2,hidden=64,heads=4,ffn=128,seq=32,vocab=128,batch=8"
	m, err := transformer.Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	layers := []profile.Layer{
		{TP: 1, MBS: 1, Seq: 32, Recompute: "none", Forward: 0.004, Backward: 0.008},
		{TP: 1, MBS: 4, Seq: 32, Recompute: "none", Forward: 0.008, Backward: 0.016},
	}
	for _, c := range []struct {
		plan  string
		procs int
	}{
		{"tp=1,pp=1,dp=1,mbs=4", 1},
		{"tp=1,pp=1,dp=2,mbs=4", 2},
		{"tp=1,pp=1,dp=2,mbs=1", 2},
	} {
		t.Run(c.plan, func(t *testing.T) {
			pod := plan.ProfilePod(cpuProfile(t, model, c.procs, layers), c.procs)
			s, err := plan.ParseStrategy(c.plan)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(m, s, pod)
			if err != nil {
				t.Fatal(err)
			}
			if r.MFU != 0 {
				t.Errorf("MFU %.1f%%, want none (0): the profile measured no peak of the CPU", 100*r.MFU)
			}
			if want := transformer.ModelFLOPs(m) / r.Step / float64(c.procs) / 1e12; !near(r.TFLOPs, want) {
				t.Errorf("TFLOP/s a process %g, want %g", r.TFLOPs, want)
			}
			if r.Capacity != 6e9 || r.Usable != 6e9 {
				t.Errorf("capacity %d, usable %d bytes: want the process's 6e9 and all of it (margin 0)", r.Capacity, r.Usable)
			}
			for _, name := range []string{"CUDA context", "NCCL buffers"} {
				if slices.ContainsFunc(r.MemoryParts, func(p plan.MemoryPart) bool { return p.Name == name }) {
					t.Errorf("memory parts %v hold the %s a CPU process has not", r.MemoryParts, name)
				}
			}
			if !r.Fits {
				t.Errorf("%s: %d bytes do not fit %d", c.plan, r.Memory, r.Usable)
			}
		})
	}
}
