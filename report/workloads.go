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
