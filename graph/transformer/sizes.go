package transformer

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// MaxCount is the largest count of bytes, parameters or tokens a
// workload's sizes may reach (2^62): half of int64's range, so that the
// few parts a GPU's memory adds up (weights, gradients, optimizer state,
// activations, buffers) stay in range. placer counts bytes in int64;
// past this a figure would wrap into a negative or small number, so a
// workload whose sizes pass it is refused (Check), never answered.
const MaxCount = 1 << 62

// stateBytes is the most bytes of training state a parameter takes in
// any stack placer costs: its BF16 weight (2), its FP32 master copy (4),
// its gradient (4 in FP32; 2 more where a BF16 copy is kept), Adam's two
// moments (8), an FP8 copy (1), rounded up.
const stateBytes = 24

// size is a count computed in checked arithmetic: once it passes
// MaxCount it stays over, whatever is added or multiplied after.
type size struct {
	n    uint64
	over bool
}

func count(n int) size {
	if n < 0 {
		return size{over: true} // never a size: Check refuses it first
	}
	return size{n: uint64(n)}
}

func (a size) times(b size) size {
	hi, lo := bits.Mul64(a.n, b.n)
	if a.over || b.over || hi != 0 || lo > MaxCount {
		return size{over: true}
	}
	return size{n: lo}
}

func (a size) plus(b size) size {
	s, carry := bits.Add64(a.n, b.n, 0)
	if a.over || b.over || carry != 0 || s > MaxCount {
		return size{over: true}
	}
	return size{n: s}
}

// widest is the widest of m's widths (hidden, the MLP's and the experts'
// inner widths, the attention's heads times their width, latent
// attention's ranks, the state-space and Gated DeltaNet mixers'), with
// the key that gives it: every matrix of a block is at most widest x
// widest.
func (m Spec) widest() (size, string) {
	w, key := count(m.Hidden), "hidden"
	for _, c := range []struct {
		key string
		n   size
	}{
		{"ffn", count(m.FFN)},
		{"expert_ffn", count(m.ExpertFFN)},
		{"heads", count(m.Heads).times(count(m.HeadDim()).plus(count(m.RopeDim)))},
		{"kv_heads", count(m.KVHeads).times(count(m.HeadDim()))},
		{"q_lora", count(m.QLoRA)},
		{"kv_lora", count(m.KVLoRA).plus(count(m.RopeDim))},
		{"ssm_heads", count(m.SSM.Heads).times(count(m.SSM.HeadDim))},
		{"ssm_state", count(m.SSM.Groups).times(count(m.SSM.State))},
		{"gdn_k_heads", count(m.GDN.KHeads).times(count(m.GDN.KDim))},
		{"gdn_v_heads", count(m.GDN.VHeads).times(count(m.GDN.VDim))},
	} {
		if c.n.over || c.n.n > w.n {
			w, key = c.n, c.key
		}
	}
	return w, key
}

// checkSizes refuses m where a size placer counts in int64 could pass
// MaxCount: its parameters' training state (at most stateBytes a
// parameter, its parameters bounded by every block's matrices at widest
// x widest: four of attention, four of each expert, shared expert and
// dense MLP, the convolutions' and norms' vectors, the embedding and the
// output layer), its tokens a step (batch x seq), and a whole step's
// activations and state together (at most 64 bytes for each of a
// token's widest-wide vectors in a block, 4 for each of its attention
// scores, 16 for each logit): every GPU holds at most that, so none of
// its memory's parts, nor their sum, can wrap. Computed in checked
// arithmetic (size), the bounds cannot wrap either; the error names the
// keys that set it.
func (m Spec) checkSizes() error {
	w, wkey := m.widest()
	layers := count(m.Layers).plus(count(m.MTP))
	mats := count(8).plus(count(4).times(count(m.Experts).plus(count(m.SharedExperts))))
	vecs := count(16).plus(count(m.Experts)).plus(count(4).times(count(m.SSM.Conv).plus(count(m.GDN.Conv))))
	block := mats.times(w).times(w).plus(vecs.times(w))
	ends := count(2).times(count(m.Vocab).plus(count(m.Seq))).times(w)
	params := layers.times(block).plus(ends)
	keys := func(ks ...string) string {
		var b strings.Builder
		for i, k := range ks {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s=%d", k, m.keyValue(k))
		}
		return b.String()
	}
	state := params.times(count(stateBytes))
	if state.over {
		moe := ""
		if m.Experts > 0 {
			moe = ", experts"
		}
		return fmt.Errorf("too large to count: its parameters' training state (layers x %s^2%s, up to %d bytes a parameter) passes 2^62 bytes, beyond placer's 64-bit sizes (%s)",
			wkey, moe, stateBytes, keys("layers", wkey))
	}
	tokens := count(m.Batch).times(count(m.Seq))
	if tokens.over {
		return fmt.Errorf("too large to count: batch x seq passes 2^62 tokens a step, beyond placer's 64-bit sizes (%s)", keys("batch", "seq"))
	}
	// A token's bytes through one block: its widest-wide vectors (the
	// MLP's, each routed and shared expert's, the attention's), and its
	// row of attention scores (4 bytes each, every head: the eager
	// stacks keep them).
	perToken := count(64).times(w).times(count(m.TopK).plus(count(m.SharedExperts)).plus(count(2))).
		plus(count(4).times(count(m.Heads)).times(count(m.Seq)))
	acts := tokens.times(layers.times(perToken).plus(count(16).times(count(m.Vocab))))
	if state.plus(acts).over {
		return fmt.Errorf("too large to count: a step's activations (batch x seq x layers x %s) and training state pass 2^62 bytes, beyond placer's 64-bit sizes (%s)", wkey, keys("batch", "seq", "layers", wkey))
	}
	return nil
}

// keyValue is the workload key k's value in m (checkSizes' keys).
func (m Spec) keyValue(k string) int {
	switch k {
	case "layers":
		return m.Layers
	case "hidden":
		return m.Hidden
	case "ffn":
		return m.FFN
	case "expert_ffn":
		return m.ExpertFFN
	case "heads":
		return m.Heads
	case "kv_heads":
		return m.KVHeads
	case "q_lora":
		return m.QLoRA
	case "kv_lora":
		return m.KVLoRA
	case "ssm_heads":
		return m.SSM.Heads
	case "ssm_state":
		return m.SSM.State
	case "gdn_k_heads":
		return m.GDN.KHeads
	case "gdn_v_heads":
		return m.GDN.VHeads
	case "seq":
		return m.Seq
	case "batch":
		return m.Batch
	}
	return 0
}

// Bytes is a count of bytes computed in float64 (a memory model's sum)
// as int64, checked: ok false where it is not a size (NaN, negative) or
// passes int64's range, where a bare conversion would wrap to a negative
// number (Go's conversion of a float out of range is
// implementation-defined: math.MinInt64 on amd64). Then it is
// math.MaxInt64, more than any GPU holds: a plan it counts never fits.
func Bytes(f float64) (n int64, ok bool) {
	if !(f >= 0 && f < math.MaxInt64) {
		return math.MaxInt64, false
	}
	return int64(f), true
}
