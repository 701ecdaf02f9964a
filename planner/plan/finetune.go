package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// Fine-tuning: a plan of a supervised fine-tuning run, where the base
// model's weights may be frozen (LoRA) and the batch's sequences are
// packs of shorter samples (sequence packing).
//
// LoRA (Hu et al., 2021, arXiv 2106.09685) as Megatron-Bridge runs it
// (docs/training/peft.md and src/megatron/bridge/peft/lora.py, v0.2 to
// v0.5): every base weight frozen (no weight gradient, no main
// gradient, no optimizer state, nothing reduced over the data-parallel
// ranks for it), and beside each targeted linear layer of width in x out
// an adapter x A B of two small GEMMs, A: in x r and B: r x out (r the
// rank), trained in full (a main gradient, Adam's FP32 master and
// moments). Targets are Megatron-Core's linear modules: linear_qkv,
// linear_proj, linear_fc1, linear_fc2 (Bridge's LoRA.target_modules,
// all four by default there and here).
//
// Packing (Bridge's packed_sequence_specs; Transformer Engine's THD
// layout with cu_seqlens): the samples of a micro-batch are concatenated
// into sequences of the model's length and attention runs within each
// sample, so a query meets the causal keys of its own sample only. The
// mix is stated: pack-len=L1:L2:... are the samples' lengths, equally
// many of each, filling each packed sequence.

// LoRATargets is a set of the linear modules LoRA adapts.
type LoRATargets uint8

// The targets, in Megatron-Core's order of a block's linear layers.
const (
	LoRAQKV LoRATargets = 1 << iota
	LoRAProj
	LoRAFC1
	LoRAFC2
)

// loraNames are the targets' Megatron-Core names, in the constants'
// order; loraShort their short spellings.
var (
	loraNames = [...]string{"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"}
	loraShort = [...]string{"qkv", "proj", "fc1", "fc2"}
)

// LoRAAll is every target (Bridge's default target_modules).
const LoRAAll = LoRAQKV | LoRAProj | LoRAFC1 | LoRAFC2

// DefaultLoRARank and DefaultLoRAAlpha are the rank and alpha of
// peft=lora where lora-rank and lora-alpha are not given: Megatron-
// Bridge's PEFT guide's example (docs/training/peft.md: dim=16,
// alpha=32).
const (
	DefaultLoRARank  = 16
	DefaultLoRAAlpha = 32
)

// Has reports whether the set holds target x.
func (t LoRATargets) Has(x LoRATargets) bool { return t&x != 0 }

// String writes the set as lora-targets reads it: the short names
// joined by "+".
func (t LoRATargets) String() string {
	var parts []string
	for i, n := range loraShort {
		if t&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "+")
}

// Names are the set's Megatron-Core module names (Bridge's
// target_modules), in order.
func (t LoRATargets) Names() []string {
	var out []string
	for i, n := range loraNames {
		if t&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// parseLoRATargets reads "qkv+proj" or "linear_qkv+linear_fc2".
func parseLoRATargets(v string) (LoRATargets, error) {
	var t LoRATargets
	for _, x := range strings.Split(v, "+") {
		x = strings.ToLower(strings.TrimSpace(x))
		i := slices.Index(loraShort[:], x)
		if i < 0 {
			i = slices.Index(loraNames[:], x)
		}
		if i < 0 {
			return 0, fmt.Errorf("%q is not a linear module LoRA adapts (want qkv, proj, fc1, fc2, joined by +)", x)
		}
		t |= 1 << i
	}
	return t, nil
}

// FineTune is a plan's fine-tuning: LoRA and sequence packing (the zero
// value: full training on unpacked sequences).
type FineTune struct {
	// LoRARank is LoRA's rank r (0: no LoRA, every weight trained).
	LoRARank int
	// LoRAAlpha is LoRA's alpha (the adapter's output scaled by
	// alpha/r): no cost, written to the exports (0: DefaultLoRAAlpha).
	LoRAAlpha int
	// LoRATargets are the linear modules adapted (0: LoRAAll).
	LoRATargets LoRATargets
	// LoRADropout is the dropout on each adapter's input (lora-dropout;
	// 0: none, Megatron-Bridge's LoRA default): NeMo's and Bridge's
	// ParallelLinearAdapter apply it before linear_in
	// (dropout_position "pre"), which keeps the dropout's output for
	// its weight gradient, and the dropout its mask.
	LoRADropout float64 `json:",omitempty"`
	// LoRAA2A is NeMo's a2a_experimental (lora-a2a=on; NVIDIA's MLPerf
	// v4.0 LoRA configs: LORA_A2A=1): under sequence parallelism a
	// row-parallel target's adapter returns its output (n x hidden/T on
	// each GPU) to the sequence shard by one all-to-all over the tensor
	// group, forward and backward (parallel_adapters.py, _All2AllHp2Sp).
	// Off: that return is not priced.
	LoRAA2A bool `json:",omitempty"`
	// LoRADropoutRecompute is NeMo's dropout_recompute
	// (lora-dropout-recompute=on; NVIDIA's MLPerf v4.1 b200_preview and
	// v5.0 LoRA config_common.sh: NEMO_LORA_USE_THUNDER_DROPOUT=1): the
	// adapters' dropout is thunder.jit(nn.Dropout(p)), which keeps no
	// mask and draws it again in the backward from its generator's seed
	// and offset (NVIDIA/NeMo v2.4.0 nemo/collections/llm/peft/utils.py
	// ParallelLinearAdapter: "self.dropout = thunder.jit(nn.Dropout(dropout))"
	// where dropout_recompute; lora.py: "recomputing dropout activations
	// during backward pass instead of storing them"). Off: the mask is
	// kept, one byte an element.
	LoRADropoutRecompute bool `json:",omitempty"`
	// PackLens are the lengths of the samples packed into each sequence,
	// equally many of each (nil: no packing, attention over the whole
	// sequence).
	PackLens []int
}

// LoRA reports whether the plan trains LoRA adapters on a frozen base.
func (f FineTune) LoRA() bool { return f.LoRARank > 0 }

// Targets is the linear modules LoRA adapts (LoRAAll where none named).
func (f FineTune) Targets() LoRATargets {
	if f.LoRATargets == 0 {
		return LoRAAll
	}
	return f.LoRATargets
}

// Alpha is LoRA's alpha (DefaultLoRAAlpha where none given).
func (f FineTune) Alpha() int {
	if f.LoRAAlpha == 0 {
		return DefaultLoRAAlpha
	}
	return f.LoRAAlpha
}

// Packed reports whether the sequences are packs of samples.
func (f FineTune) Packed() bool { return len(f.PackLens) > 0 }

// PackedKeys is the causal keys a query of model m meets on average
// when each sequence is packed with samples of lengths PackLens, equally
// many of each: each sample of length L is its own causal square, so a
// sample's queries meet CausalKeys of the model at sequence L, and the
// mean over the packed tokens weights each sample by its L. Unpacked:
// transformer.CausalKeys(m).
func (f FineTune) PackedKeys(m transformer.Spec) float64 { return f.packedKeys(m, 0) }

// TiledKeys is PackedKeys as a fused attention kernel of tiles of tile
// queries by tile keys computes them (transformer.TiledKeys).
func (f FineTune) TiledKeys(m transformer.Spec, tile int) float64 { return f.packedKeys(m, tile) }

// packedKeys is PackedKeys (tile <= 0) or TiledKeys.
func (f FineTune) packedKeys(m transformer.Spec, tile int) float64 {
	if !f.Packed() {
		return transformer.TiledKeys(m, tile)
	}
	var keys, tokens float64
	for _, l := range f.PackLens {
		s := m
		s.Seq = min(l, m.Seq)
		keys += float64(s.Seq) * transformer.TiledKeys(s, tile)
		tokens += float64(s.Seq)
	}
	return keys / tokens
}

// finish completes the keys read (seen): peft=lora's default rank, and
// refuses lora keys without peft=lora and pack=on without pack-len, in
// one line each.
func (f *FineTune) finish(seen map[string]bool) error {
	if f.LoRARank == -1 {
		f.LoRARank = DefaultLoRARank
	}
	lora := seen["lora-rank"] || seen["lora-alpha"] || seen["lora-targets"] || seen["lora-dropout"] || seen["lora-a2a"] || seen["lora-dropout-recompute"]
	if lora && !seen["peft"] {
		return fmt.Errorf("lora-rank, lora-alpha, lora-targets, lora-a2a, lora-dropout or lora-dropout-recompute without peft=lora")
	}
	if lora && !f.LoRA() {
		return fmt.Errorf("lora-rank, lora-alpha, lora-targets, lora-a2a, lora-dropout or lora-dropout-recompute with peft=none")
	}
	if f.LoRADropoutRecompute && f.LoRADropout == 0 {
		return fmt.Errorf("lora-dropout-recompute=on without lora-dropout above 0: there is no dropout to recompute")
	}
	if f.PackLens != nil && len(f.PackLens) == 0 {
		return fmt.Errorf("pack=on without pack-len: state the packed samples' lengths (pack-len=1024, or a mix 512:2048)")
	}
	return nil
}
