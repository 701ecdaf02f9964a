package gdp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// tinyGraphs are two small hand-built graphs of different shapes: two
// parallel branches, and a ladder of memory-bound elementwise ops.
func tinyGraphs(t *testing.T) []TrainGraph {
	t.Helper()
	b := graph.NewBuilder("branches")
	src := b.AddOp(graph.Op{Name: "src", HasTime: true, Time: 1e-6})
	sink := b.AddOp(graph.Op{Name: "sink", HasTime: true, Time: 1e-6})
	for br := 0; br < 2; br++ {
		prev := src
		for i := 0; i < 6; i++ {
			v := b.AddOp(graph.Op{Name: fmt.Sprintf("b%d_%d", br, i), HasTime: true, Time: 1e-3})
			b.AddTensor(prev, 1024, v)
			prev = v
		}
		b.AddTensor(prev, 1024, sink)
	}
	g1, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	b = graph.NewBuilder("ladder")
	const mb = 1 << 20
	prev := -1
	for i := 0; i < 10; i++ {
		v := b.AddOp(graph.Op{Name: fmt.Sprint("e", i), Class: graph.ClassElementwise, FLOPs: 1e6, BytesRead: mb, BytesWritten: mb})
		if prev >= 0 {
			b.AddTensor(prev, mb, v)
		}
		prev = v
	}
	b.AddTensor(prev, mb)
	g2, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var out []TrainGraph
	for _, g := range []*graph.Graph{g1, g2} {
		p, err := methodstest.RooflineProblem(g, cluster(t, 2), roofline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, TrainGraph{Name: g.Name(), Problem: p})
	}
	return out
}

func pretrain(t *testing.T, ckpt, resume string, steps int) *PretrainResult {
	t.Helper()
	pt := &Pretrain{Graphs: tinyGraphs(t), Config: small, Seed: 3, Samples: 4, Warmup: 2, Steps: steps,
		Checkpoint: ckpt, CheckpointEvery: 2, Resume: resume}
	r, err := pt.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPretrainCheckpointResume(t *testing.T) {
	dir := t.TempDir()
	a, c := filepath.Join(dir, "a.policy"), filepath.Join(dir, "c.policy")
	pa := pretrain(t, a, "", 6)
	if pa.Step != 6 || len(pa.Curve) != 6 || pa.Status != optimize.BudgetReached {
		t.Fatalf("run of 6 steps: step %d, %d points, %v", pa.Step, len(pa.Curve), pa.Status)
	}
	if pa.Curve[0].Phase != "imitate" || pa.Curve[2].Phase != "ppo" || pa.Curve[2].Graph != "branches" || pa.Curve[3].Graph != "ladder" {
		t.Fatalf("curve = %+v", pa.Curve)
	}
	pc := pretrain(t, c, "", 6)
	if pc.Curve[5].MeanReward != pa.Curve[5].MeanReward {
		t.Fatalf("same seed, different runs: %v vs %v", pc.Curve[5].MeanReward, pa.Curve[5].MeanReward)
	}
	da, _ := os.ReadFile(a)
	dc, _ := os.ReadFile(c)
	if !bytes.Equal(da, dc) {
		t.Fatal("same seed, different policy files")
	}
	// Stop at 3 (checkpoint at 2 and at the end), resume to 6.
	r := filepath.Join(dir, "r.policy")
	pretrain(t, r, "", 3)
	_, st, err := LoadCheckpoint(r)
	if err != nil || st.Step != 3 || st.Seed != 3 || len(st.Graphs) != 2 {
		t.Fatalf("checkpoint state %+v, %v", st, err)
	}
	pr := pretrain(t, r, r, 6)
	if pr.Step != 6 || len(pr.Curve) != 3 || pr.Curve[0].Step != 4 || pr.Curve[0].Graph != "ladder" {
		t.Fatalf("resumed run: step %d, curve %+v", pr.Step, pr.Curve)
	}
	if _, st, _ := LoadCheckpoint(r); st.Step != 6 || st.Elapsed <= 0 {
		t.Fatalf("state after resume: %+v", st)
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file %s left", e.Name())
		}
	}
}

func TestPretrainBadCheckpoints(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "m.policy")
	pretrain(t, good, "", 2)
	data, _ := os.ReadFile(good)
	state, _ := os.ReadFile(CheckpointState(good))
	write := func(name string, policyData, stateData []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, policyData, 0o644)
		if stateData != nil {
			os.WriteFile(CheckpointState(p), stateData, 0o644)
		}
		return p
	}
	other, _ := policy.New(small, 9)
	var ob bytes.Buffer
	other.WriteTo(&ob)
	// withPolicy is the state file with its embedded policy replaced (nil:
	// removed, as checkpoints written before it was embedded), keeping
	// the hash.
	withPolicy := func(pol []byte, rehash bool) []byte {
		var m map[string]any
		if err := json.Unmarshal(state, &m); err != nil {
			t.Fatal(err)
		}
		if pol == nil {
			delete(m, "policy")
		} else {
			m["policy"] = pol
		}
		if rehash {
			sum := sha256.Sum256(pol)
			m["policy_sha256"] = hex.EncodeToString(sum[:])
		}
		js, _ := json.Marshal(m)
		return js
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"truncated", write("t.policy", data, withPolicy(data[:len(data)/2], true)), "truncated"},
		{"not a policy", write("n.policy", data, withPolicy([]byte("hello"), true)), "not a placer policy file"},
		{"no state", write("s.policy", data, nil), "state file"},
		{"foreign state", write("f.policy", data, withPolicy(ob.Bytes(), false)), "policy hash mismatch"},
		{"old format, foreign policy file", write("o.policy", ob.Bytes(), withPolicy(nil, false)), "policy hash mismatch"},
		{"bad state", write("b.policy", data, []byte(`{"format":"x"`)), "not a checkpoint state file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt := &Pretrain{Graphs: tinyGraphs(t), Steps: 3, Resume: tc.path}
			_, err := pt.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
	// A checkpoint from before the state held the policy still resumes;
	// so does one whose policy file is damaged or lags (the state has its
	// own): what a kill between SaveCheckpoint's two files leaves.
	for _, p := range []string{write("old.policy", data, withPolicy(nil, false)), write("lag.policy", data[:10], state), write("prev.policy", ob.Bytes(), state)} {
		pol, _, err := LoadCheckpoint(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		var got bytes.Buffer
		pol.WriteTo(&got)
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("%s: loaded another policy than the checkpoint's", filepath.Base(p))
		}
	}
	// Other graphs than the checkpoint's.
	pt := &Pretrain{Graphs: tinyGraphs(t)[:1], Steps: 3, Resume: good}
	if _, err := pt.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "same graphs") {
		t.Fatalf("resume on other graphs: %v", err)
	}
}

func TestPretrainCancelledCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.policy")
	ctx, cancel := context.WithCancel(context.Background())
	pt := &Pretrain{Graphs: tinyGraphs(t), Config: small, Samples: 4, Warmup: -1, Steps: 1000, Checkpoint: path}
	pt.OnStep = func(p PretrainPoint) {
		if p.Step == 2 {
			cancel()
		}
	}
	r, err := pt.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != optimize.Cancelled || r.Step != 2 {
		t.Fatalf("status %v at step %d", r.Status, r.Step)
	}
	if _, st, err := LoadCheckpoint(path); err != nil || st.Step != 2 {
		t.Fatalf("checkpoint after Ctrl-C: %+v, %v", st, err)
	}
}

func TestZeroShot(t *testing.T) {
	pt := pretrain(t, "", "", 4)
	for _, g := range tinyGraphs(t) {
		z := &ZeroShot{Policy: pt.Policy, Samples: 4}
		res, err := z.Optimize(context.Background(), g.Problem, &optimize.Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Decision.Validate(g.Problem.Graph, 2); err != nil || res.Eval.StepTime <= 0 || res.Stats.Evaluations != 5 {
			t.Fatalf("%s: decision %v, step %v, %d evaluations", g.Name, err, res.Eval.StepTime, res.Stats.Evaluations)
		}
	}
	// A policy for other tasks is refused with a clear error.
	g := tinyGraphs(t)[0]
	g.Problem.Tasks = optimize.Tasks{Placement: true}
	if _, err := (&ZeroShot{Policy: pt.Policy}).Optimize(context.Background(), g.Problem, nil); err == nil || !strings.Contains(err.Error(), "the policy decides placement,scheduling,fusion") {
		t.Fatalf("task mismatch: %v", err)
	}
}
