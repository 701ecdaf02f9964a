package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

// TestSerialStepMeasured: the h100 preset's serial-step latencies are the
// means, over the LSTMs the lent H100 timed (shapes.jsonl, kind lstm)
// other than the LSTM language model's own 35 x 20 x 650 x 2 layer, of
// each LSTM's forward and backward time over its sequence x layers steps;
// and that held-out LSTM, costed by the roofline with them, comes within
// 30% of its own measured forward and backward (without the floor its
// forward is costed 0.19 ms against 1.70 measured).
func TestSerialStepMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-c", "shapes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type lstm struct {
		Kind, Name                        string
		Seq, Batch, Input, Hidden, Layers int
		FLOPs                             float64 `json:"flops"`
		Fwd                               float64 `json:"fwd_seconds"`
		Bwd                               float64 `json:"bwd_seconds"`
	}
	var fwd, bwd []float64
	var held *lstm
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l lstm
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind != "lstm" {
			continue
		}
		if l.Name == "lstm.35x20x650x650x2" {
			held = &l
			continue
		}
		steps := float64(l.Seq * l.Layers)
		fwd, bwd = append(fwd, l.Fwd/steps), append(bwd, l.Bwd/steps)
	}
	if len(fwd) != 3 || held == nil {
		t.Fatalf("%d LSTMs besides the held-out one (want 3), held out found: %v", len(fwd), held != nil)
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	h, _ := Preset("h100")
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"forward", h.SerialStep, mean(fwd)}, {"backward", h.SerialStepBwd, mean(bwd)}} {
		if math.Abs(c.got-c.want) > 0.01e-6 {
			t.Errorf("%s step %.2f us, the measurements' mean %.2f us", c.name, c.got*1e6, c.want*1e6)
		}
	}

	// The held-out LSTM as the exporter records it: one op forward of
	// its FLOPs, one backward of twice them, 35 x 2 steps each.
	for _, c := range []struct {
		backward bool
		flops    float64
		want     float64
	}{{false, held.FLOPs, held.Fwd}, {true, 2 * held.FLOPs, held.Bwd}} {
		op := &graph.Op{Name: "lstm", Type: "_cudnn_rnn", Class: graph.ClassMatMul, DType: graph.F32,
			FLOPs: c.flops, Backward: c.backward, Steps: held.Seq * held.Layers}
		got, _ := opDuration(&h, op, 0, TF32{MatMul: false, Conv: true})
		if e := got/c.want - 1; math.Abs(e) > 0.30 {
			t.Errorf("held-out LSTM, backward %v: %.3f ms against %.3f measured (%+.0f%%)", c.backward, got*1e3, c.want*1e3, 100*e)
		}
		op.Steps = 0
		alone, _ := opDuration(&h, op, 0, TF32{MatMul: false, Conv: true})
		t.Logf("held-out LSTM, backward %v: %.3f ms (%.3f without the floor) against %.3f measured", c.backward, got*1e3, alone*1e3, c.want*1e3)
	}
}
