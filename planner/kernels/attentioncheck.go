package kernels

import "fmt"

// AttentionCheck is one measured attention case against the pod's fit of
// the same backend, seconds.
type AttentionCheck struct {
	Name         string  `json:"name"`
	Backend      string  `json:"backend"`
	Heads        int     `json:"heads"`
	HeadDim      int     `json:"head_dim"`
	Seq          int     `json:"seq"`
	SeqK         int     `json:"seq_k,omitempty"`
	Batch        int     `json:"batch"`
	FwdMeasured  float64 `json:"fwd_measured_s"`
	FwdPredicted float64 `json:"fwd_predicted_s"`
	BwdMeasured  float64 `json:"bwd_measured_s"`
	BwdPredicted float64 `json:"bwd_predicted_s"`
}

// CheckAttention predicts each measured case with kernels ks' attention
// kernel of its backend (Node.Attention). A backend ks has not
// measured is an error naming those it has.
func CheckAttention(ms []MeasuredAttention, ks Node) ([]AttentionCheck, error) {
	out := make([]AttentionCheck, len(ms))
	for i, m := range ms {
		k, err := ks.WithAttention(m.Backend)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(k.Attention) == 0 {
			return nil, fmt.Errorf("%s: no measured attention kernel", m.Name)
		}
		a := k.Attention[0]
		out[i] = AttentionCheck{Name: m.Name, Backend: m.Backend, Heads: m.Heads, HeadDim: m.HeadDim, Seq: m.Seq, SeqK: m.SeqK, Batch: m.Batch,
			FwdMeasured: m.Fwd, FwdPredicted: a.Fwd.Time(m.Call(1)),
			BwdMeasured: m.Bwd, BwdPredicted: a.Bwd.Time(m.Call(2.5))}
	}
	return out, nil
}
