package eager

import "github.com/placer/placer/graph/transformer"

// The in-tree code bases (CodeBase; each in the file of its op list).
var (
	// LayerLlamaPy is placer_torch.profile.layers' Block (llamapy.go): one
	// QKV and one gate-up GEMM, RMS norm in the residual stream's dtype,
	// rotary on interleaved halves (slices, muls, sub, add, stack).
	LayerLlamaPy CodeBase = llamaPyCode{}
	// LayerHF is transformers' LlamaDecoderLayer (hf.go; modeling_llama.py,
	// 5.24 in the project's virtualenv): q, k, v, gate and up
	// projections a GEMM each (their inputs' gradients added), RMS norm
	// upcast to FP32 and cast back (LlamaRMSNorm: hidden_states.to(float32)
	// ... weight * hidden_states.to(input_dtype)), rotary by rotate_half
	// (neg, cat) over [batch, seq, head_dim] tables, SDPA with
	// enable_gqa (no repeated keys).
	LayerHF CodeBase = hfCode{}
	// LayerTitan is torchtitan's Llama at 9dec370 (titan.go;
	// torchtitan/models/llama/model.py, models/norms.py RMSNorm):
	// LayerHF's norms and projections (w1, w3 for gate and up), the
	// rotary embedding as a complex product in FP32 (x.float(),
	// view_as_complex, a complex mul, view_as_real, type_as), keys and
	// values repeated to every query head (repeat_kv: expand, reshape)
	// for SDPA without enable_gqa, [batch, seq, hidden] activations.
	LayerTitan CodeBase = titanCode{}
)

// LayerOps is the ops of one Llama-style layer of m at shard shape
// s, forward then backward (no recomputation: eagerBlock adds it).
func LayerOps(m transformer.Spec, s Shape) []Op { return eagerOps(m, s, false) }

// OutputOps is the ops of the output part at shard shape s: the
// final norm (the layer's kind), the output layer (V/T of the
// vocabulary at tensor degree T) and the cross-entropy of the FP32
// logits as the layer's code base runs it (layerOps.loss), forward and
// backward; the loss's collectives among them (Op.Comm).
func OutputOps(m transformer.Spec, s Shape) []Op { return eagerOps(m, s, true) }

func eagerOps(m transformer.Spec, s Shape, output bool) []Op {
	if s.Layer == nil {
		s.Layer = LayerLlamaPy
	}
	o := newLayerOps(m, s)
	if output {
		o.loss()
	} else {
		s.Layer.Layer(Writer{o})
	}
	return o.ops
}
