package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// Written is a plan as a user writes it (--strategy): the strategy
// ParseStrategy reads, and the keys the text names. placer eval takes
// the keys left out at their defaults (tp, cp, pp, vp 1, dp what they
// leave: Resolve); placer search searches them (SpaceOf). A key written
// is the plan's in both: never replaced by another value.
type Written struct {
	Strategy
	keys map[string]bool // the keys named, by their first names (keyName)
}

// ParseWritten reads text as ParseStrategy does and records the keys it
// names.
func ParseWritten(text string) (Written, error) {
	s, err := ParseStrategy(text)
	if err != nil {
		return Written{}, err
	}
	pairs, err := SplitStrategy(text)
	if err != nil {
		return Written{}, err
	}
	w := Written{Strategy: s, keys: map[string]bool{}}
	for _, kv := range pairs {
		w.keys[KeyName(kv.Key)] = true
	}
	return w, nil
}

// Names reports whether the text named key (by its name, KeyName: tp,
// not tensor).
func (w Written) Names(key string) bool { return w.keys[key] }

// Check refuses, in one line, a key of w that no plan of model m on pod
// p has, whatever the keys w leaves out are (Search's plans, every
// degree it tries where a key is left out): a tensor-parallel degree (tp,
// each of stage-tp) that does not divide the heads, the key/value heads
// or a node's GPUs; cp that does not split the sequence; pp above the
// layers; the degrees written whose product does not divide the pod's
// GPUs, or with tp, pp and dp written is not them (context parallelism,
// left out, making up the rest only where Search tries it); dp x mbs
// that does not divide the batch; ep or etp on a dense model, or not
// dividing the experts, a node or the expert FFN; fp8 on GPUs without
// FP8; peft=lora where LoRA is not modelled (FineTuneFits). Each is the
// line Resolve gives for the same mistake. placer eval and placer search
// both check their --strategy with it before anything else, so what one
// refuses for the keys written the other refuses with the same line.
func (w Written) Check(m transformer.Spec, p Pod) error {
	s := w.Strategy
	bad := func(err error) error { return fmt.Errorf("strategy %s: %w", asWritten(s), err) }
	n := p.GPUs()
	if ts := s.TensorStages; ts != nil {
		one := slices.Min(ts) == slices.Max(ts) // Resolve's tp=
		for i, T := range ts {
			name := fmt.Sprintf("stage %d's tp=%d", i, T)
			if one {
				name = fmt.Sprintf("tp=%d", T)
			}
			if err := tensorFits(m, p, T, name); err != nil {
				return bad(err)
			}
		}
	} else if T := s.TensorDegree(); T > 1 {
		if err := tensorFits(m, p, T, fmt.Sprintf("tp=%d", T)); err != nil {
			return bad(err)
		}
	}
	if C := s.ContextDegree(); C > 1 {
		if err := contextFits(m, C); err != nil {
			return bad(err)
		}
		if err := mtpFits(m, C); err != nil {
			return bad(err)
		}
	}
	if w.keys["pp"] {
		eu, lu := s.endUnits()
		if err := pipelineFits(m, s.PipelineDegree(), eu+lu); err != nil {
			return bad(err)
		}
	}
	// The GPUs of the degrees written: a replica's (tp x pp, or the sum
	// of stage-tp), the context's and the replicas'.
	var factors []string
	gpus := 1
	stageTP := s.TensorStages != nil
	for _, d := range []struct {
		key string
		n   int
	}{{"tp", s.TensorDegree()}, {"cp", s.ContextDegree()}, {"pp", s.PipelineDegree()}, {"dp", s.ReplicaCount()}} {
		if w.keys[d.key] && !(stageTP && d.key == "pp") {
			factors, gpus = append(factors, fmt.Sprintf("%s=%d", d.key, d.n)), gpus*d.n
		}
	}
	if stageTP { // Resolve's order: dp first
		sum := 0
		for _, T := range s.TensorStages {
			sum += T
		}
		factors, gpus = append(factors, fmt.Sprintf("the %d GPUs of stage-tp", sum)), gpus*sum
	}
	if w.keys["dp"] && (w.keys["tp"] || stageTP) && (w.keys["pp"] || stageTP) && gpus != n {
		// Only context parallelism is left to make up the GPUs: where it
		// is written, or the rest is not a degree Search tries, the plan
		// has none.
		if rest := n / gpus; w.keys["cp"] || n%gpus != 0 || !slices.Contains(ContextDegrees(m, rest), rest) {
			return bad(worldMismatch(factors, gpus, n, s.ReplicaCount()))
		}
	}
	if len(factors) > 0 && n%gpus != 0 {
		verb := "does"
		if len(factors) == 1 && stageTP {
			verb = "do" // the GPUs of stage-tp
		}
		return bad(fmt.Errorf("%s %s not divide the %d GPUs", strings.Join(factors, " x "), verb, n))
	}
	if w.keys["dp"] {
		if err := batchFits(m, s.ReplicaCount(), max(s.MicroBatchSize, 1)); err != nil {
			return bad(err)
		}
	} else if mbs := s.MicroBatchSize; mbs > 0 && m.Batch%mbs != 0 {
		return bad(fmt.Errorf("the batch of %d is not divisible by mbs=%d", m.Batch, mbs))
	}
	if !m.MoE() {
		if err := expertKeysFit(m, s, asWritten(s)); err != nil {
			return err
		}
	} else if w.keys["ep"] || w.keys["etp"] {
		etp := 1 // left out: 1 or tp, Search tries both
		if w.keys["etp"] {
			etp = max(s.ExpertTensor, 1)
		}
		if err := expertsFit(m, p, s.ExpertDegree(), etp); err != nil {
			return bad(err)
		}
	}
	if err := fp8Fits(s, p); err != nil {
		return bad(err)
	}
	// LoRA on experts or latent attention, a rank over the width, a
	// packed sample over the sequence: Resolve's line, so that search
	// says what eval says rather than that no plan fits.
	if err := FineTuneFits(m, s); err != nil {
		return bad(err)
	}
	return nil
}

// tensorFits checks a tensor-parallel degree T (named name: "tp=8",
// "stage 0's tp=4") against model m and pod p: it divides the heads,
// the key/value heads and a node's GPUs (tensor groups stay inside a
// node).
func tensorFits(m transformer.Spec, p Pod, T int, name string) error {
	switch {
	case m.Heads%T != 0:
		return fmt.Errorf("%s does not divide the %d attention heads", name, m.Heads)
	case m.KVHeads%T != 0:
		return fmt.Errorf("%s does not divide the %d key/value heads", name, m.KVHeads)
	case T > p.PerNode || p.PerNode%T != 0:
		return fmt.Errorf("%s does not divide the %d GPUs of a node (tensor groups stay inside a node)", name, p.PerNode)
	}
	return ssmFits(m, T, name)
}

// contextFits checks a context-parallel degree C against model m: each
// GPU of a context group holds chunks i and 2C-1-i of every sequence
// (load-balanced causal attention), so the sequence splits into 2C equal
// chunks.
func contextFits(m transformer.Spec, C int) error {
	if m.Seq%(2*C) != 0 {
		return fmt.Errorf("cp=%d: the sequence of %d does not split into 2 x cp = %d equal chunks (load-balanced causal attention)", C, m.Seq, 2*C)
	}
	return nil
}

// mtpFits refuses multi-token prediction with context parallelism
// (Megatron-Core's MTP does not support it: its multi_token_prediction
// guide).
func mtpFits(m transformer.Spec, C int) error {
	if m.MTP > 0 && C > 1 {
		return fmt.Errorf("mtp=%d with cp=%d: Megatron-Core's multi-token prediction does not run with context parallelism", m.MTP, C)
	}
	return nil
}

// pipelineFits checks P pipeline stages against model m's layers and the
// units counted as layers beside them (the embedding, the loss).
func pipelineFits(m transformer.Spec, P, units int) error {
	if P > m.Layers+units {
		return fmt.Errorf("pp=%d is more than the %d layers", P, m.Layers+units)
	}
	return nil
}

// batchFits checks that D replicas of micro-batches of mbs samples
// divide model m's batch.
func batchFits(m transformer.Spec, D, mbs int) error {
	// mbs past batch/D first: D x mbs, computed only then, cannot wrap
	// (dp=8,mbs=2^63-1 wrapped to -8, which divided the batch).
	if D < 1 || mbs < 1 || mbs > m.Batch/D || m.Batch%(D*mbs) != 0 {
		return fmt.Errorf("the batch of %d is not divisible by dp=%d x mbs=%d", m.Batch, D, mbs)
	}
	return nil
}

// worldMismatch is the line for a dp written whose plan's GPUs (total,
// the product of factors) are not the pod's n: dp is never replaced by
// what the other degrees leave.
func worldMismatch(factors []string, total, n, dp int) error {
	return fmt.Errorf("%s is %s, the cluster has %d: give tp, cp and pp whose product with dp=%d is %d, or leave dp out (it is then what they leave)",
		strings.Join(factors, " x "), gpusOf(total), n, dp, n)
}

// gpusOf is "1 GPU", "8 GPUs".
func gpusOf(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// fp8Fits refuses an FP8 recipe on GPUs without FP8 tensor cores.
func fp8Fits(s Strategy, p Pod) error {
	if s.FP8 != "" && p.Kernels.FP8Peak <= 0 {
		return fmt.Errorf("fp8=%s on %s: its GPUs have no FP8 tensor cores", s.FP8, p.Hardware.Name)
	}
	if err := rocmFits(s, p); err != nil {
		return err
	}
	return blockScaledFits(s, p)
}

// expertKeysFit refuses the experts' keys on model m without experts
// (written: the strategy as its errors name it).
func expertKeysFit(m transformer.Spec, s Strategy, written asWritten) error {
	if !m.MoE() && (s.Experts > 1 || s.ExpertTensor > 0 || s.Imbalance > 1 || s.EPOverlap) {
		return fmt.Errorf("strategy %s: ep, etp, imbalance or epoverlap on a model without experts", written)
	}
	return nil
}

// expertsFit checks an expert-parallel degree ep and an
// expert-tensor-parallel degree etp against model m's experts and pod
// p's nodes.
func expertsFit(m transformer.Spec, p Pod, ep, etp int) error {
	switch {
	case m.Experts%ep != 0:
		return fmt.Errorf("ep=%d does not divide the %d experts", ep, m.Experts)
	case etp > p.PerNode || p.PerNode%etp != 0:
		return fmt.Errorf("etp=%d does not divide the %d GPUs of a node (expert tensor groups stay inside a node)", etp, p.PerNode)
	case m.ExpertFFN%etp != 0:
		return fmt.Errorf("etp=%d does not divide the expert FFN of %d", etp, m.ExpertFFN)
	}
	return nil
}

// MinContextSeq and MinContextTokens bound the context-parallel degrees
// Search tries: none below a sequence of MinContextSeq tokens, and none
// that leaves a GPU fewer than MinContextTokens of each sequence (the
// sequence the node's attention rate was measured at, Kernels; below it
// context parallelism only shrinks the kernels).
const (
	MinContextSeq    = 8192
	MinContextTokens = 4096
)

// ContextDegrees are the context-parallel degrees Search tries on gpus
// GPUs (those a tensor group leaves): 1, and where the sequence is at
// least MinContextSeq the powers of two C dividing gpus that split it
// into 2C equal chunks with at least MinContextTokens tokens a GPU.
func ContextDegrees(m transformer.Spec, gpus int) []int {
	out := []int{1}
	if m.Seq < MinContextSeq {
		return out
	}
	for C := 2; gpus%C == 0 && m.Seq%(2*C) == 0 && m.Seq/C >= MinContextTokens; C *= 2 {
		out = append(out, C)
	}
	return out
}
