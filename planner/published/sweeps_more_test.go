package published

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestPublishedSweepsRead: every row of the sweeps of sweeps_more.go
// is a plan placer writes (its workload, cluster and strategy read as
// placer eval reads them, and resolved), on the GPUs the publication
// states, its global batch that of the row's source, with the
// micro-batches per replica its published gradient accumulation where
// the source states one. The expectations are the publications' figures,
// by hand: Korthikanti et al.'s table 3 (GPUs 8 x PP, batches 4, 64, 280
// and 512 at data-parallel size 1 and micro-batch 1: as many micro-batches),
// torchtitan's 64 A100s with local batch 1 or 2, the README's 64 H100s
// with global batch 256, Megatron-Bridge's GA column (25.09 and 25.11).
func TestPublishedSweepsRead(t *testing.T) {
	type want struct {
		gpus, rows int
		batch      []int // each row's global batch
		micro      []int // each row's micro-batches per replica (0: not checked)
	}
	wants := map[string]want{
		"Korthikanti et al.: GPT 22B":                     {8, 2, []int{4, 4}, []int{4, 4}},
		"Korthikanti et al.: GPT 175B":                    {64, 2, []int{64, 64}, []int{64, 64}},
		"Korthikanti et al.: GPT 530B":                    {280, 2, []int{280, 280}, []int{280, 280}},
		"Korthikanti et al.: GPT 1T":                      {512, 2, []int{512, 512}, []int{512, 512}},
		"torchtitan A100: Llama 3 8B":                     {64, 2, []int{64, 64}, []int{1, 1}},
		"torchtitan A100: Llama 2 13B":                    {64, 3, []int{128, 128, 128}, []int{1, 1, 1}},
		"torchtitan A100: Llama 2 70B":                    {64, 2, []int{64, 128}, []int{1, 1}},
		"Megatron-Core MoE README":                        {64, 2, []int{256, 256}, []int{16, 32}},
		"Megatron-Bridge DGX-H100 by release: Llama 3 8B": {8, 2, []int{128, 128}, []int{16, 16}},
		"Megatron-Bridge DGX-H100 by release: Llama 3 70B": {64, 6, []int{128, 128, 256, 256, 256, 256},
			[]int{64, 64, 0, 0, 0, 0}},
		"Megatron-Bridge DGX-H100 by release: Llama 3.1 405B": {1024, 5, []int{512, 512, 1536, 1536, 1536}, []int{64, 64, 0, 0, 0}},
		// 25.11's GA 2 is not what PP 4 runs: 512 / (16 x 4) = 8.
		// GPT-OSS 25.11 at its recipe's MBS 1 (the table's GA 2 cannot
		// be with PP 4 x MBS 4): 512 over DP 16.
		"Megatron-Bridge DGX-H100 by release: GPT-OSS 120B": {64, 6, []int{512, 1280, 1280, 1280, 1280, 1280}, []int{32, 0, 0, 0, 0, 0}},
		"Megatron-Bridge DGX-H100 by release: Qwen3-30B-A3B": {16, 7, []int{512, 512, 1024, 1024, 1024, 1024, 1024},
			[]int{32, 32, 0, 0, 0, 0, 0}},
		// Batch 32 over dp=2 x mbs 1 (SFT) and dp=1 (LoRA).
		"Megatron-Bridge DGX-H100 26.06 fine-tuning: Llama 3 70B SFT":  {32, 1, []int{32}, []int{16}},
		"Megatron-Bridge DGX-H100 26.06 fine-tuning: Llama 3 70B LoRA": {8, 1, []int{32}, []int{32}},
		"Megatron-Bridge DGX-H100 by release: Qwen3-235B-A22B": {256, 6, []int{2048, 2048, 8192, 8192, 8192, 8192},
			[]int{128, 128, 0, 0, 0, 0}},
		// Local batch 16 over FSDP 32 and 12 over FSDP 8, one micro-batch.
		"torchtitan async TP (2025-06): Llama 3 70B": {256, 6, []int{512, 512, 512, 512, 512, 512}, []int{1, 1, 1, 1, 1, 1}},
		"torchtitan async TP (2025-06): Llama 3 8B":  {64, 6, []int{96, 96, 96, 96, 96, 96}, []int{1, 1, 1, 1, 1, 1}},
		"torchao float8 (2025-03): Llama 3 8B":       {8, 3, []int{8, 8, 8}, []int{1, 1, 1}},
	}
	var sweeps []Sweep // the Blackwell rows: TestBridgeBlackwellRows; InternEvo's: TestInternEvoRows
	for _, sw := range publishedSweeps() {
		if sw.Set != SetBridgeBlackwell && !isCodebaseSet(sw.Set) {
			sweeps = append(sweeps, sw)
		}
	}
	if len(sweeps) != len(wants) {
		t.Errorf("%d published sweeps, want %d", len(sweeps), len(wants))
	}
	seen := map[string]bool{}
	for _, sw := range sweeps {
		var w want
		var key string
		for k, v := range wants {
			if strings.HasPrefix(sw.Name, k) && len(k) > len(key) {
				key, w = k, v
			}
		}
		if key == "" {
			t.Errorf("%s: no expectation", sw.Name)
			continue
		}
		seen[key] = true
		if len(sw.Rows) != w.rows {
			t.Errorf("%s: %d rows, want %d", sw.Name, len(sw.Rows), w.rows)
			continue
		}
		if sw.Source == "" || sw.Stack == "" {
			t.Errorf("%s: no source or stack", sw.Name)
		}
		for i, r := range sw.Rows {
			m, err := transformer.Parse(r.Workload)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			p, err := plan.ParsePod(r.Cluster)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			s, err := plan.ParseStrategy(r.Strategy)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			pl, err := plan.Resolve(m, s, p)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			if g := p.GPUs(); g != w.gpus || pl.ReplicaGPUs()*pl.CP*pl.DP != g {
				t.Errorf("%s, %s: %d GPUs in the pod, %d x %d x %d in the plan; want %d", sw.Name, r.Label, g, pl.ReplicaGPUs(), pl.CP, pl.DP, w.gpus)
			}
			if m.Batch != w.batch[i] {
				t.Errorf("%s, %s: batch %d, want %d", sw.Name, r.Label, m.Batch, w.batch[i])
			}
			if w.micro[i] > 0 && pl.NumMicro != w.micro[i] {
				t.Errorf("%s, %s: %d micro-batches, want %d", sw.Name, r.Label, pl.NumMicro, w.micro[i])
			}
			if !(r.Measured > 0) {
				t.Errorf("%s, %s: measured %g", sw.Name, r.Label, r.Measured)
			}
		}
	}
	for k := range wants {
		if !seen[k] {
			t.Errorf("no sweep %q", k)
		}
	}
	// Every published sweep is one of Sweeps(): placer report sweeps prints it.
	all := map[string]bool{}
	for _, sw := range Sweeps() {
		all[sw.Name] = true
	}
	for _, sw := range sweeps {
		if !all[sw.Name] {
			t.Errorf("%s: not in Sweeps()", sw.Name)
		}
	}
}

// TestOrderSweep: an order-only sweep ranks its rows 1, 2, ... as stated
// (1 the fastest), each rank at most the row count.
func TestOrderSweep(t *testing.T) {
	for _, sw := range publishedSweeps() {
		if sw.Unit != Order {
			continue
		}
		for _, r := range sw.Rows {
			if r.Measured != float64(int(r.Measured)) || r.Measured < 1 || int(r.Measured) > len(sw.Rows) {
				t.Errorf("%s, %s: rank %g, want a whole number from 1 to %d", sw.Name, r.Label, r.Measured, len(sw.Rows))
			}
		}
	}
	if got := Order.String(); !strings.Contains(got, "1 the fastest") {
		t.Errorf("Order is %q", got)
	}
}

// TestTorchaoHosts: the torchao float8 rows run on the GPUs their
// author's log of the same benchmark describes (pytorch/ao#1802,
// 2025-02-28: "memory: 47.79GiB(50.30%)", torchtitan's peak reserved over
// get_device_properties().total_memory): 47.79 / 0.5030 = 95.01 GiB, the
// 96 GB H100 at its 500 W default, not an 80 GB H100 SXM at 700 W.
func TestTorchaoHosts(t *testing.T) {
	const capacityGiB = 47.79 / 0.5030 // 95.01, by hand
	var sw *Sweep
	for _, s := range publishedSweeps() {
		if s.Set == SetTorchaoFloat8 {
			sw = &s
		}
	}
	if sw == nil {
		t.Fatal("no torchao float8 sweep")
	}
	for _, r := range sw.Rows {
		p, err := plan.ParsePod(r.Cluster)
		if err != nil {
			t.Fatalf("%s: %v", r.Label, err)
		}
		if got := float64(p.Hardware.Memory) / (1 << 30); math.Abs(got-capacityGiB) > 0.05 {
			t.Errorf("%s: %s has %.2f GiB a GPU, the log reads %.2f", r.Label, r.Cluster, got, capacityGiB)
		}
		if p.PowerLimit != 500 {
			t.Errorf("%s: %s held at %v W, want the 96 GB H100's 500 W default", r.Label, r.Cluster, p.PowerLimit)
		}
	}
}
