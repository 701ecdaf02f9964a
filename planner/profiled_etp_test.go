package planner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// etpProfile is a CPU profile of the tiny MoE on 2 processes, written
// here: its layer at tp 2 with sequence parallelism, expert-tensor
// degree 1 (no "etp": a file without it reads as 1) and 2, each timed
// alone and in place, and at etp 2 a second micro-batch timed alone
// only; the embedding and loss at tp 2, the optimizer, the host, the
// collectives over 2.
const etpProfile = `{
 "format": "placer-profile", "version": 2, "kind": "layers", "complete": true,
 "device": {"kind": "cpu", "name": "Intel(R) Xeon(R) Processor", "count": 2, "memory_bytes": 12638031872, "threads": 1, "cores": 2},
 "software": {"torch": "2.14.1", "backend": "gloo", "framework": "pytorch"},
 "model": "llama:layers=4,hidden=256,heads=4,ffn=512,seq=256,vocab=1024,batch=8,experts=8,topk=2,expert_ffn=256",
 "dtype": "fp32",
 "layers": [
  {"tp": 2, "sp": true, "mbs": 1, "seq": 256, "recompute": "none", "forward_s": 0.004, "backward_s": 0.008, "forward_inplace_s": 0.005, "backward_inplace_s": 0.0095},
  {"tp": 2, "sp": true, "etp": 2, "mbs": 1, "seq": 256, "recompute": "none", "forward_s": 0.003, "backward_s": 0.006, "forward_inplace_s": 0.0042, "backward_inplace_s": 0.0081},
  {"tp": 2, "sp": true, "etp": 2, "mbs": 4, "seq": 256, "recompute": "none", "forward_s": 0.011, "backward_s": 0.023}
 ],
 "embedding": [{"tp": 2, "sp": true, "mbs": 1, "seq": 256, "forward_s": 0.0002, "backward_s": 0.0005}],
 "loss": [{"tp": 2, "sp": true, "mbs": 1, "seq": 256, "forward_s": 0.002, "backward_s": 0.005}],
 "optimizer": {"name": "adamw", "params": 1000000, "seconds": 0.015},
 "collectives": [
  {"op": "all_reduce", "group": 2, "bytes": 131072, "seconds": 0.001},
  {"op": "all_reduce", "group": 2, "bytes": 1048576, "seconds": 0.003},
  {"op": "all_to_all", "group": 2, "bytes": 131072, "seconds": 0.0012}
 ],
 "host": {"issue_s": 0.00001, "issue_backward_s": 0.00002}
}
`

// TestProfiledExpertsTP: a model with experts at tensor parallelism 2
// is priced from the profile where the plan's tp, etp and ep are a
// shape it measured (its in-place time: the layer's, the
// communication what that added to the kernels alone) or composes (in
// tokens), and by the roofline where the profile lacks the plan's etp
// or ep, or the plan runs an imbalance.
func TestProfiledExpertsTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etp.profile.json")
	if err := os.WriteFile(path, []byte(etpProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, err := profile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.Parse(pr.Model)
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(pr, 2)
	for _, c := range []struct {
		plan     string
		src      profile.Source
		fwd, bwd float64 // the layer's; 0: the roofline's (modelled)
		comm     float64 // the forward's communication: tensor-parallel and the experts' together
		inPlace  bool    // the in-place timing stands for the communication
	}{
		// etp 1: the shape without "etp"; 5 and 9.5 ms in place, 1 ms
		// of it beyond the kernels' 4 ms forward.
		{"tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1", profile.Measured, 0.005, 0.0095, 0.001, true},
		// etp 2 (the default: etp = tp): 4.2 and 8.1 ms, 1.2 beyond 3.
		{"tp=2,pp=1,dp=1,mbs=1,sp=on", profile.Measured, 0.0042, 0.0081, 0.0012, true},
		// mbs 2 at etp 2: between mbs 1 (in place) and 4 (alone) in
		// tokens for the kernels, 3 + (11 - 3)/3 = 5.667 ms and 6 +
		// (23 - 6)/3 = 11.667; the in-place timing only at mbs 1, twice
		// its tokens: 8.4 and 16.2 ms.
		{"tp=2,pp=1,dp=1,mbs=2,sp=on", profile.Composed, 0.0084, 0.0162, 0.0084 - (0.003 + 0.008/3), true},
		// mbs 4 at etp 2: measured alone (11 + 23 ms); the in-place
		// timing composed from mbs 1 (4 x 4.2, 4 x 8.1 ms).
		{"tp=2,pp=1,dp=1,mbs=4,sp=on", profile.Measured, 0.0168, 0.0324, 0.0168 - 0.011, true},
		// ep 2 at tp 2: no such shape in the profile.
		{"tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1,ep=2", profile.Modelled, 0, 0, 0, false},
		// tp 1: none either.
		{"tp=1,pp=1,dp=2,mbs=1", profile.Modelled, 0, 0, 0, false},
		// An imbalance the forced-balance profile did not run.
		{"tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1,imbalance=1.5", profile.Modelled, 0, 0, 0, false},
	} {
		s, err := plan.ParseStrategy(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", c.plan, err)
		}
		if r.Sources == nil || r.Sources.Layers != c.src {
			t.Errorf("%s: sources %+v, want layers %s", c.plan, r.Sources, c.src)
			continue
		}
		pl, err := plan.Resolve(m, s, pod)
		if err != nil {
			t.Fatal(err)
		}
		tokens := float64(pl.MBS) * float64(m.Seq)
		co := newCoster(m, pl, &pod, pl.TP, tokens)
		f, b := co.layer()
		// The roofline's block on the same pod (its collectives the
		// profile's where it timed them).
		rf, rb := co.block(true)
		if c.src == profile.Modelled {
			if !near(f.Busy, rf.Busy) || !near(b.Busy, rb.Busy) {
				t.Errorf("%s: layer %.6g + %.6g s, want the roofline's %.6g + %.6g", c.plan, f.Busy, b.Busy, rf.Busy, rb.Busy)
			}
			continue
		}
		if near(f.Busy, rf.Busy) {
			t.Errorf("%s: layer %.6g s, the roofline's", c.plan, f.Busy)
		}
		if !near(f.Busy, c.fwd) || !near(b.Busy, c.bwd) || !near(f.TPExposed+f.EPExposed, c.comm) {
			t.Errorf("%s: layer %.6g + %.6g s (forward communication %.6g + %.6g), want %.6g + %.6g (%.6g)",
				c.plan, f.Busy, b.Busy, f.TPExposed, f.EPExposed, c.fwd, c.bwd, c.comm)
		}
		if c.inPlace && (r.Sources.TP == profile.Modelled || pl.ETP > 1 && r.Sources.EP == profile.Modelled) {
			t.Errorf("%s: tensor-parallel %s, experts' %s; want both from the in-place timing", c.plan, r.Sources.TP, r.Sources.EP)
		}
		// The split between the groups follows the roofline's: at etp 1
		// and ep 1 the experts have no communication, at etp 2 they do.
		if pl.ETP == 1 && f.EPExposed != 0 || pl.ETP > 1 && !(f.EPExposed > 0 && f.TPExposed > 0) {
			t.Errorf("%s: forward communication tensor-parallel %.6g, experts' %.6g", c.plan, f.TPExposed, f.EPExposed)
		}
	}
}

// TestProfiledExpertsETPLacking: a profile of the layer at etp 1 only
// prices a plan at etp 1 (measured) and leaves the same plan at etp 2
// (tp 2's default) to the roofline.
func TestProfiledExpertsETPLacking(t *testing.T) {
	pr, err := profile.Decode([]byte(etpProfile))
	if err != nil {
		t.Fatal(err)
	}
	p := *pr
	p.Layers = pr.Layers[:1] // tp 2, sp, no "etp": 1
	m, err := transformer.Parse(p.Model)
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(&p, 2)
	for text, want := range map[string]profile.Source{
		"tp=2,pp=1,dp=1,mbs=1,sp=on,etp=1": profile.Measured,
		"tp=2,pp=1,dp=1,mbs=1,sp=on,etp=2": profile.Modelled,
		"tp=2,pp=1,dp=1,mbs=1,sp=on":       profile.Modelled,
	} {
		s, err := plan.ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, pod)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if r.Sources.Layers != want {
			t.Errorf("%s: layers %s, want %s", text, r.Sources.Layers, want)
		}
	}
}

// TestProfiledExpertsAlone: without an in-place timing (one process
// timed the shard alone) the layer is the measured kernels plus the
// communication the roofline costs for its MoE block, the experts'
// gather and scatter over etp among it (not a dense block's MLP).
func TestProfiledExpertsAlone(t *testing.T) {
	pr, err := profile.Decode([]byte(etpProfile))
	if err != nil {
		t.Fatal(err)
	}
	p := *pr
	p.Layers = []profile.Layer{{TP: 2, SP: true, ETP: 2, MBS: 1, Seq: 256, Recompute: "none", Forward: 0.003, Backward: 0.006}}
	m, err := transformer.Parse(p.Model)
	if err != nil {
		t.Fatal(err)
	}
	pod := plan.ProfilePod(&p, 2)
	s, err := plan.ParseStrategy("tp=2,pp=1,dp=1,mbs=1,sp=on,etp=2")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Resolve(m, s, pod)
	if err != nil {
		t.Fatal(err)
	}
	c := newCoster(m, pl, &pod, 2, float64(m.Seq))
	f, b := c.layer()
	withComm, alone := c, c
	alone.NoComm = true
	rf1, _ := withComm.block(true)
	rf0, _ := alone.block(true)
	comm := rf1.Busy - rf0.Busy
	if !(f.EPExposed > 0) || !near(f.Busy, 0.003+comm) || !(b.Busy > 0.006) {
		t.Errorf("forward %.6g s (experts' communication %.6g), backward %.6g; want 0.003 + the roofline's %.6g, above 0.006",
			f.Busy, f.EPExposed, b.Busy, comm)
	}
}
