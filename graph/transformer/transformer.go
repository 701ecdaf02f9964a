package transformer

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is a decoder-only transformer and its training batch. GPT (Radford
// et al.; Megatron-LM's GPT) has learned positions, layer norms, a GeLU
// MLP of 4 x Hidden, biases and an output layer tied to the token
// embedding; Llama has rotary positions, RMS norms, a SwiGLU MLP, no
// biases, grouped-query attention and an untied output layer.
type Spec struct {
	Family  string // "gpt" or "llama"
	Layers  int    // transformer blocks l
	Hidden  int    // hidden size h
	Heads   int    // attention heads a
	KVHeads int    // key/value heads (grouped-query attention; = Heads in GPT)
	FFN     int    // MLP inner width (4h in GPT; SwiGLU's in Llama)
	Seq     int    // sequence length s
	Vocab   int    // vocabulary V
	Batch   int    // global batch B, in sequences
	Tied    bool   // the output layer's weight is the token embedding
}

// GPT is Megatron-LM's GPT of the given shape: FFN 4h, tied embeddings.
func GPT(layers, hidden, heads, seq, vocab, batch int) Spec {
	return Spec{Family: "gpt", Layers: layers, Hidden: hidden, Heads: heads, KVHeads: heads,
		FFN: 4 * hidden, Seq: seq, Vocab: vocab, Batch: batch, Tied: true}
}

// HeadDim is the width of one attention head.
func (m Spec) HeadDim() int { return m.Hidden / m.Heads }

// SwiGLU reports whether the MLP is gated (Llama).
func (m Spec) SwiGLU() bool { return m.Family == "llama" }

// Biases reports whether linear layers carry biases (GPT).
func (m Spec) Biases() bool { return m.Family != "llama" }

// String writes m as Parse reads it.
func (m Spec) String() string {
	s := fmt.Sprintf("%s:layers=%d,hidden=%d,heads=%d", m.Family, m.Layers, m.Hidden, m.Heads)
	def := m.defaults()
	if m.KVHeads != def.KVHeads {
		s += ",kv_heads=" + strconv.Itoa(m.KVHeads)
	}
	if m.FFN != def.FFN {
		s += ",ffn=" + strconv.Itoa(m.FFN)
	}
	s += fmt.Sprintf(",seq=%d,vocab=%d,batch=%d", m.Seq, m.Vocab, m.Batch)
	if m.Tied != def.Tied {
		s += ",tied=" + strconv.FormatBool(m.Tied)
	}
	return s
}

// defaults is m with KVHeads, FFN and Tied as its family has them.
func (m Spec) defaults() Spec {
	d := m
	d.KVHeads = m.Heads
	switch m.Family {
	case "llama":
		// Llama 2's SwiGLU width: 2/3 of 4h, rounded up to a multiple of 256.
		d.FFN = (8*m.Hidden/3 + 255) / 256 * 256
		d.Tied = false
	default:
		d.FFN = 4 * m.Hidden
		d.Tied = true
	}
	return d
}

// Parse reads a workload written "gpt:layers=96,hidden=12288,heads=96,
// seq=4096,vocab=131072,batch=1152" (or "llama:..."): the keys layers,
// hidden, heads, seq, vocab and batch are required; kv_heads, ffn and tied
// default to the family's. Errors are one line naming the key.
func Parse(text string) (Spec, error) {
	family, rest, ok := strings.Cut(text, ":")
	family = strings.ToLower(strings.TrimSpace(family))
	if family != "gpt" && family != "llama" {
		return Spec{}, fmt.Errorf("workload %q: want gpt:key=value,... or llama:key=value,...", text)
	}
	if !ok || strings.TrimSpace(rest) == "" {
		return Spec{}, fmt.Errorf("workload %q: no shape (keys layers, hidden, heads, seq, vocab, batch)", text)
	}
	m := Spec{Family: family}
	seen := map[string]bool{}
	tied := ""
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return Spec{}, fmt.Errorf("workload %q: %q is not key=value", text, kv)
		}
		if seen[k] {
			return Spec{}, fmt.Errorf("workload %q: %q given twice", text, k)
		}
		seen[k] = true
		if k == "tied" {
			tied = v
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Spec{}, fmt.Errorf("workload %q: %q=%q is not a whole number of at least 1", text, k, v)
		}
		switch k {
		case "layers":
			m.Layers = n
		case "hidden":
			m.Hidden = n
		case "heads":
			m.Heads = n
		case "kv_heads", "kv-heads":
			m.KVHeads = n
		case "ffn":
			m.FFN = n
		case "seq":
			m.Seq = n
		case "vocab":
			m.Vocab = n
		case "batch":
			m.Batch = n
		default:
			return Spec{}, fmt.Errorf("workload %q: unknown key %q (keys layers, hidden, heads, kv_heads, ffn, seq, vocab, batch, tied)", text, k)
		}
	}
	for _, k := range []string{"layers", "hidden", "heads", "seq", "vocab", "batch"} {
		if !seen[k] {
			return Spec{}, fmt.Errorf("workload %q: %s missing (keys layers, hidden, heads, seq, vocab, batch are required)", text, k)
		}
	}
	d := m.defaults()
	if m.KVHeads == 0 {
		m.KVHeads = d.KVHeads
	}
	if m.FFN == 0 {
		m.FFN = d.FFN
	}
	m.Tied = d.Tied
	if tied != "" {
		b, err := strconv.ParseBool(tied)
		if err != nil {
			return Spec{}, fmt.Errorf("workload %q: tied=%q is not true or false", text, tied)
		}
		m.Tied = b
	}
	if err := m.Check(); err != nil {
		return Spec{}, fmt.Errorf("workload %q: %w", text, err)
	}
	return m, nil
}

// Check reports the first inconsistency of m's shape.
func (m Spec) Check() error {
	switch {
	case m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.Seq < 1 || m.Vocab < 1 || m.Batch < 1 || m.FFN < 1:
		return fmt.Errorf("layers, hidden, heads, ffn, seq, vocab and batch must be at least 1")
	case m.Hidden%m.Heads != 0:
		return fmt.Errorf("%d heads do not divide hidden %d", m.Heads, m.Hidden)
	case m.KVHeads < 1 || m.Heads%m.KVHeads != 0:
		return fmt.Errorf("kv_heads %d does not divide heads %d", m.KVHeads, m.Heads)
	}
	return nil
}

// LayerParams is the parameter count of one transformer block.
func (m Spec) LayerParams() int64 {
	h, f, d := int64(m.Hidden), int64(m.FFN), int64(m.HeadDim())
	qkv := h * (int64(m.Heads) + 2*int64(m.KVHeads)) * d
	mlp := 2 * h * f
	if m.SwiGLU() {
		mlp = 3 * h * f
	}
	p := qkv + h*h + mlp
	if m.Biases() {
		p += (int64(m.Heads)+2*int64(m.KVHeads))*d + h + f + h // qkv, proj, fc1, fc2 biases
		p += 2 * 2 * h                                         // two layer norms: scale and shift
	} else {
		p += 2 * h // two RMS norms: scale
	}
	return p
}

// EmbeddingParams is the token embedding's (and GPT's learned
// positions') parameter count.
func (m Spec) EmbeddingParams() int64 {
	p := int64(m.Vocab) * int64(m.Hidden)
	if m.Family == "gpt" {
		p += int64(m.Seq) * int64(m.Hidden)
	}
	return p
}

// OutputParams is the final norm's and, untied, the output layer's
// parameter count.
func (m Spec) OutputParams() int64 {
	p := 2 * int64(m.Hidden)
	if !m.Biases() {
		p = int64(m.Hidden)
	}
	if !m.Tied {
		p += int64(m.Vocab) * int64(m.Hidden)
	}
	return p
}

// Params is the model's parameter count.
func (m Spec) Params() int64 {
	return int64(m.Layers)*m.LayerParams() + m.EmbeddingParams() + m.OutputParams()
}

// layerMatmulFLOPs is one token's forward matmul FLOPs in one block,
// attention scores counted over the whole sequence (not the causal half),
// as Megatron-LM counts them.
func (m Spec) layerMatmulFLOPs() float64 {
	h, f, s, d := float64(m.Hidden), float64(m.FFN), float64(m.Seq), float64(m.HeadDim())
	qkv := 2 * h * (float64(m.Heads) + 2*float64(m.KVHeads)) * d
	mlp := 2 * 2 * h * f
	if m.SwiGLU() {
		mlp = 3 * 2 * h * f
	}
	return qkv + 2*h*h + mlp + 2*2*s*h
}

// ModelFLOPs is one training step's model FLOPs (forward and backward,
// no recomputation), as Megatron-LM's tables count them: for GPT,
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) (Narayanan et al., SC'21, eq. 3).
func (m Spec) ModelFLOPs() float64 {
	tokens := float64(m.Batch) * float64(m.Seq)
	logits := 2 * float64(m.Hidden) * float64(m.Vocab)
	return 3 * tokens * (float64(m.Layers)*m.layerMatmulFLOPs() + logits)
}
