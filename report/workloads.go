package report

import (
	"fmt"
	"io"
)

// Workload is one row of `placer workloads list`.
type Workload struct {
	Name            string  `json:"name"`
	Family          string  `json:"family"`
	Ops             int     `json:"ops"`
	PaperOps        int     `json:"paper_ops,omitempty"` // the op count the papers give, 0 if none
	Edges           int     `json:"edges"`
	GFLOPs          float64 `json:"gflops_per_step"`
	ParamBytes      int64   `json:"param_bytes"`      // weights, gradients and optimizer slots
	ActivationBytes int64   `json:"activation_bytes"` // peak beyond parameters on one GPU, FIFO order
	SingleGPUStep   float64 `json:"single_gpu_step_s"`
	ExpertDevices   int     `json:"expert_devices"` // the device count GO's table 2 uses
}

// WriteWorkloads writes the workloads table.
func WriteWorkloads(w io.Writer, rows []Workload, hardware string) error {
	w, flush := fitLines(w)
	defer flush()
	var t [][]string
	for _, r := range rows {
		paper := "-"
		if r.PaperOps > 0 {
			paper = fmt.Sprintf("%d (%+.0f%%)", r.PaperOps, 100*(float64(r.Ops)/float64(r.PaperOps)-1))
		}
		t = append(t, []string{r.Name, r.Family, fmt.Sprint(r.Ops), paper, fmt.Sprint(r.Edges), fmt.Sprintf("%.1f", r.GFLOPs),
			Bytes(r.ParamBytes), Bytes(r.ActivationBytes), Seconds(r.SingleGPUStep), fmt.Sprint(r.ExpertDevices)})
	}
	if err := TableFit(w, []string{"workload", "family", "ops", "paper ops", "edges", "GFLOPs", "params+slots", "activations", "1-GPU step (" + hardware + ")", "GPUs"}, t, []int{4, 3}); err != nil {
		return err
	}
	fmt.Fprintln(w, "params+slots: weights, gradients and optimizer state; activations: peak beyond them on one GPU in FIFO order")
	return nil
}

// WorkloadsList is `placer workloads list --json`: the op graphs' rows
// and the transformer presets'.
type WorkloadsList struct {
	Graphs  []Workload `json:"graphs"`
	Presets []Preset   `json:"presets"`
}

// Preset is one published model of `placer workloads list`'s second
// table: what --workload NAME:seq=N,batch=N plans at cluster scale.
type Preset struct {
	Name         string `json:"name"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden"`
	Heads        int    `json:"heads"`
	KVHeads      int    `json:"kv_heads"`
	Experts      int    `json:"experts,omitempty"`
	TopK         int    `json:"topk,omitempty"`
	Vocab        int    `json:"vocab"`
	Params       int64  `json:"params"`
	ActiveParams int64  `json:"active_params"`
}

// WritePresets writes the presets' table and how to name each.
func WritePresets(w io.Writer, rows []Preset) error {
	w, flush := fitLines(w)
	defer flush()
	var t [][]string
	for _, r := range rows {
		experts := "-"
		if r.Experts > 0 {
			experts = fmt.Sprintf("%d (top %d)", r.Experts, r.TopK)
		}
		t = append(t, []string{r.Name, fmt.Sprint(r.Layers), fmt.Sprint(r.Hidden), fmt.Sprintf("%d/%d", r.Heads, r.KVHeads),
			experts, fmt.Sprint(r.Vocab), fmt.Sprintf("%.2fB", float64(r.Params)/1e9), fmt.Sprintf("%.2fB", float64(r.ActiveParams)/1e9)})
	}
	if err := TableFit(w, []string{"preset", "layers", "hidden", "heads/kv", "experts", "vocab", "parameters", "active"}, t, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "transformers at cluster scale: --workload PRESET:seq=4096,batch=512 --cluster dgx-h100:NODES; also "+
		"gpt:KEYS, llama:KEYS (layers, hidden, heads, seq, vocab, batch, ...) and hf:PATH/config.json:seq=4096,batch=512 "+
		"(docs/cluster-scale.md)")
	return err
}
