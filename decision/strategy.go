package decision

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Strategy is how one training step is split around the decision's
// placement (DESIGN §10). The placement (Device, Priority, Fusion) is one
// replica's; Replicas copies of it run data-parallel, each on its share of
// the global batch and on its own Devices GPUs (Replicas x devices in
// all), and each replica's share runs as MicroBatches micro-batches
// through the placement's stages in Schedule's order, gradients
// accumulated, the optimizer step once at the end. Shard says what the
// replicas shard among themselves. The zero value is one replica and one
// micro-batch: a decision of placer's first format, unchanged.
//
// Tensor, Pipeline, MicroBatchSize, Virtual, SequenceParallel, Recompute
// and the zero1 shard describe a plan of a uniform transformer at cluster
// scale (Megatron-LM's 3D parallelism, DESIGN §12: GPUs = Tensor x
// Pipeline x Replicas; evaluate/scale): there every stage holds Layers /
// Pipeline identical layers, so the stages are a count, not a placement.
// A decision over an op graph has its stages in its placement; the
// strategy evaluator of op graphs refuses those fields (CheckFor).
type Strategy struct {
	// Replicas is the data-parallel degree R (0 = 1).
	Replicas int `json:"replicas,omitempty"`
	// MicroBatches is M, the micro-batches each replica's share of the
	// batch is split into (0 = 1).
	MicroBatches int `json:"micro_batches,omitempty"`
	// Schedule orders the micro-batches through the stages (with M > 1;
	// "" = GPipe).
	Schedule Schedule `json:"schedule,omitempty"`
	// Shard is what the replicas shard: nothing (DDP: every replica holds
	// the whole model, gradients all-reduced), or parameters, gradients
	// and optimizer state (FSDP, ZeRO-3).
	Shard Shard `json:"shard,omitempty"`
	// BucketBytes is DDP's gradient bucket (0 = DefaultBucketBytes).
	BucketBytes int64 `json:"bucket_bytes,omitempty"`

	// Tensor is the tensor-parallel degree T (0 = 1): Megatron-LM's
	// column- then row-parallel split of every attention and MLP block,
	// and a vocabulary-parallel embedding and output layer, over T GPUs
	// of one node.
	Tensor int `json:"tensor,omitempty"`
	// SequenceParallel splits what runs between the tensor-parallel
	// blocks (norms, dropout, residuals) along the sequence over the T
	// GPUs, turning each all-reduce into a reduce-scatter and an
	// all-gather (Korthikanti et al., 2022).
	SequenceParallel bool `json:"sequence_parallel,omitempty"`
	// Pipeline is the number of pipeline stages P of a uniform
	// transformer (0 = 1).
	Pipeline int `json:"pipeline,omitempty"`
	// Virtual is the number of model chunks per pipeline stage V
	// (interleaved 1F1B; 0 = 1).
	Virtual int `json:"virtual_stages,omitempty"`
	// MicroBatchSize is the samples per micro-batch (0: the batch over
	// replicas and micro-batches).
	MicroBatchSize int `json:"micro_batch_size,omitempty"`
	// Recompute is what a layer's backward recomputes of its forward.
	Recompute Recompute `json:"recompute,omitempty"`
	// RecomputeLayers, with full recomputation, is how many layers of
	// each model chunk recompute their forward (Megatron-LM's
	// --recompute-method block --recompute-num-layers N); the others keep
	// their activations. 0: every layer (--recompute-method uniform
	// --recompute-num-layers 1).
	RecomputeLayers int `json:"recompute_layers,omitempty"`
	// TPOverlap overlaps the tensor-parallel all-gathers and
	// reduce-scatters with the GEMMs beside them (Megatron-Core's
	// --tp-comm-overlap; it needs sequence parallelism).
	TPOverlap bool `json:"tp_overlap,omitempty"`
	// FirstLayers and LastLayers are the layers of the first and the last
	// pipeline stage where they differ from the others' share (0: an even
	// share); the stages between split the rest evenly (Megatron-Core's
	// later --decoder-first-pipeline-num-layers and
	// --decoder-last-pipeline-num-layers; Llama 3 405B's 126 layers on 16
	// stages are first=7, last=7: 7, 8 x 14, 7). StageLayers gives the
	// split.
	FirstLayers int `json:"first_stage_layers,omitempty"`
	LastLayers  int `json:"last_stage_layers,omitempty"`
	// TensorStages, when set, is each pipeline stage's tensor-parallel
	// degree, P of them, in place of Tensor (which is then 0): stage i
	// runs on TensorStages[i] x Replicas GPUs, the plan on Replicas x
	// their sum ("stage-tp=4:8:8:8"). The data-parallel degree is every
	// stage's. nil: every stage runs Tensor.
	TensorStages []int `json:"tensor_stages,omitempty"`
	// Context is the context-parallel degree C (0 = 1): every sequence
	// of a micro-batch split over C GPUs, each holding 2 of its 2C
	// chunks (chunks i and 2C-1-i, so that causal attention's work is
	// even), the keys and values exchanged around the C GPUs for
	// attention (Megatron-Core's --context-parallel-size). GPUs = Tensor
	// x Context x Pipeline x Replicas; the C GPUs hold the same weights,
	// so gradients are reduced over Context x Replicas.
	Context int `json:"context,omitempty"`
}

// Recompute is activation recomputation (Korthikanti et al., 2022).
type Recompute string

// The recomputations.
const (
	// NoRecompute keeps every activation the backward needs.
	NoRecompute Recompute = ""
	// SelectiveRecompute recomputes the core attention (the softmax and
	// its dropout) in the backward, keeping the rest.
	SelectiveRecompute Recompute = "selective"
	// FullRecompute keeps only each layer's input and runs the layer's
	// forward again before its backward.
	FullRecompute Recompute = "full"
)

// DefaultBucketBytes is PyTorch DDP's default gradient bucket, 25 MiB
// (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb=25).
const DefaultBucketBytes = 25 << 20

// Schedule is a pipeline schedule.
type Schedule string

// The pipeline schedules.
const (
	// GPipe runs every micro-batch's forward, then every backward
	// (Huang et al., NeurIPS'19): each stage holds all M micro-batches'
	// activations.
	GPipe Schedule = "gpipe"
	// OneFOneB alternates one forward and one backward once the pipeline
	// is full (PipeDream-Flush, Megatron-LM): the same bubble, at most S
	// micro-batches' activations on a stage.
	OneFOneB Schedule = "1f1b"
)

// Shard is what data-parallel replicas shard among themselves.
type Shard string

// The shardings.
const (
	// NoShard is DDP: every replica keeps the whole model; gradients are
	// all-reduced in buckets, overlapped with the backward pass.
	NoShard Shard = ""
	// FullShard is FSDP (ZeRO-3): a replica keeps 1/R of the parameters,
	// gradients and optimizer state; each layer's parameters are
	// all-gathered before use and its gradients reduce-scattered after.
	FullShard Shard = "fsdp"
	// GradShard is ZeRO-2 (DeepSpeed's stage 2; PyTorch FSDP's
	// SHARD_GRAD_OP): every replica keeps the whole parameters, but the
	// gradients are reduce-scattered, each GPU keeps and steps the
	// optimizer on 1/R of them, and the updated parameters are
	// all-gathered after the step.
	GradShard Shard = "zero2"
	// OptimizerShard is ZeRO-1, Megatron-LM's distributed optimizer:
	// every replica keeps the whole parameters and gradients, the
	// gradients are reduce-scattered, each GPU steps 1/R of the optimizer
	// state, and the updated parameters are all-gathered.
	OptimizerShard Shard = "zero1"
)

// R is the data-parallel degree (at least 1).
func (s Strategy) R() int { return max(s.Replicas, 1) }

// M is the number of micro-batches (at least 1).
func (s Strategy) M() int { return max(s.MicroBatches, 1) }

// Sched is the schedule in effect (GPipe when none is named).
func (s Strategy) Sched() Schedule {
	if s.Schedule == "" {
		return GPipe
	}
	return s.Schedule
}

// T is the tensor-parallel degree (at least 1).
func (s Strategy) T() int { return max(s.Tensor, 1) }

// StageT is each of the P pipeline stages' tensor-parallel degree:
// TensorStages where set, else T for every stage.
func (s Strategy) StageT() []int {
	if s.TensorStages != nil {
		return s.TensorStages
	}
	out := make([]int, s.P())
	for i := range out {
		out[i] = s.T()
	}
	return out
}

// C is the context-parallel degree (at least 1).
func (s Strategy) C() int { return max(s.Context, 1) }

// MaxT is the largest tensor-parallel degree of any stage (at least 1).
func (s Strategy) MaxT() int {
	t := s.T()
	for _, x := range s.TensorStages {
		t = max(t, x)
	}
	return t
}

// Equal reports whether s and o are the same strategy (Strategy holds a
// slice, so == does not compile).
func (s Strategy) Equal(o Strategy) bool {
	if !slices.Equal(s.TensorStages, o.TensorStages) {
		return false
	}
	s.TensorStages, o.TensorStages = nil, nil
	return reflect.DeepEqual(s, o)
}

// P is the number of pipeline stages of a uniform transformer (at least 1).
func (s Strategy) P() int { return max(s.Pipeline, 1) }

// V is the number of model chunks per pipeline stage (at least 1).
func (s Strategy) V() int { return max(s.Virtual, 1) }

// Scale reports whether s uses a field only plans of a uniform
// transformer have (tensor, pipeline, virtual stages, micro-batch size,
// sequence parallelism, recomputation, the zero1 shard), and the first one.
func (s Strategy) Scale() (string, bool) {
	switch {
	case s.Tensor > 1:
		return "tp=" + strconv.Itoa(s.Tensor), true
	case s.Pipeline > 1:
		return "pp=" + strconv.Itoa(s.Pipeline), true
	case s.Virtual > 1:
		return "vp=" + strconv.Itoa(s.Virtual), true
	case s.MicroBatchSize > 0:
		return "mbs=" + strconv.Itoa(s.MicroBatchSize), true
	case s.SequenceParallel:
		return "sp=on", true
	case s.Recompute != NoRecompute:
		return "recompute=" + string(s.Recompute), true
	case s.Shard == OptimizerShard:
		return "shard=zero1", true
	case s.TPOverlap:
		return "tpoverlap=on", true
	case s.RecomputeLayers > 0:
		return "recompute-layers=" + strconv.Itoa(s.RecomputeLayers), true
	case s.FirstLayers > 0:
		return "first=" + strconv.Itoa(s.FirstLayers), true
	case s.LastLayers > 0:
		return "last=" + strconv.Itoa(s.LastLayers), true
	case s.TensorStages != nil:
		return "stage-tp=" + stageDegrees(s.TensorStages), true
	case s.Context > 1:
		return "cp=" + strconv.Itoa(s.Context), true
	}
	return "", false
}

// StageLayers is how many of a transformer's layers each of the P
// pipeline stages holds: layers / P each, or with FirstLayers or
// LastLayers those on the end stages and the rest split evenly over the
// stages between. The error is one line naming what does not add up.
func (s Strategy) StageLayers(layers int) ([]int, error) {
	P := s.P()
	out := make([]int, P)
	if s.FirstLayers == 0 && s.LastLayers == 0 {
		if layers%P != 0 {
			return nil, fmt.Errorf("pp=%d does not divide the %d layers (first= and last= set the end stages' layers)", P, layers)
		}
		for i := range out {
			out[i] = layers / P
		}
		return out, nil
	}
	if P == 1 {
		return nil, fmt.Errorf("first= or last= with one pipeline stage: they set the end stages of a pipeline")
	}
	rest, inner := layers, P
	if s.FirstLayers > 0 {
		rest, inner = rest-s.FirstLayers, inner-1
	}
	if s.LastLayers > 0 {
		rest, inner = rest-s.LastLayers, inner-1
	}
	if inner == 0 && rest != 0 {
		return nil, fmt.Errorf("first=%d + last=%d is not the %d layers of 2 stages", s.FirstLayers, s.LastLayers, layers)
	}
	if inner > 0 && (rest < inner || rest%inner != 0) {
		return nil, fmt.Errorf("first=%d, last=%d: the other %d layers do not split evenly over the other %d stages (at least one each)", s.FirstLayers, s.LastLayers, rest, inner)
	}
	for i := range out {
		switch {
		case i == 0 && s.FirstLayers > 0:
			out[i] = s.FirstLayers
		case i == P-1 && s.LastLayers > 0:
			out[i] = s.LastLayers
		default:
			out[i] = rest / inner
		}
	}
	return out, nil
}

// Bucket is DDP's gradient bucket in bytes.
func (s Strategy) Bucket() int64 {
	if s.BucketBytes <= 0 {
		return DefaultBucketBytes
	}
	return s.BucketBytes
}

// IsZero reports whether s is one replica and one micro-batch with no
// sharding: today's single-replica decision.
func (s Strategy) IsZero() bool {
	_, scaled := s.Scale()
	return s.R() == 1 && s.M() == 1 && s.Shard == NoShard && s.Schedule == "" && s.BucketBytes == 0 && !scaled
}

// Check reports the first field out of range, as a one-line error.
func (s Strategy) Check() error {
	switch {
	case s.Replicas < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("replicas %d: want at least 1", s.Replicas)}
	case s.MicroBatches < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("micro_batches %d: want at least 1", s.MicroBatches)}
	case s.BucketBytes < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("bucket_bytes %d: want at least 1", s.BucketBytes)}
	case s.Tensor < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("tensor %d: want at least 1", s.Tensor)}
	case s.Pipeline < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("pipeline %d: want at least 1", s.Pipeline)}
	case s.Virtual < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("virtual_stages %d: want at least 1", s.Virtual)}
	case s.MicroBatchSize < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("micro_batch_size %d: want at least 1", s.MicroBatchSize)}
	case s.FirstLayers < 0 || s.LastLayers < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("first_stage_layers %d, last_stage_layers %d: want at least 1", s.FirstLayers, s.LastLayers)}
	case s.RecomputeLayers < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("recompute_layers %d: want at least 1", s.RecomputeLayers)}
	case s.RecomputeLayers > 0 && s.Recompute != FullRecompute:
		return &Error{Field: "strategy", Msg: "recompute-layers without recompute=full: it counts the layers that recompute their whole forward"}
	case (s.FirstLayers > 0 || s.LastLayers > 0) && s.P() == 1:
		return &Error{Field: "strategy", Msg: "first= or last= with one pipeline stage: they set the end stages of a pipeline"}
	case s.Virtual > 1 && s.P() == 1:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("vp=%d with one pipeline stage: virtual stages interleave a pipeline", s.Virtual)}
	case s.TensorStages != nil && s.Tensor > 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("tp=%d and stage-tp=%s both given: stage-tp sets every stage's degree", s.Tensor, stageDegrees(s.TensorStages))}
	case s.TensorStages != nil && len(s.TensorStages) != s.P():
		return &Error{Field: "strategy", Msg: fmt.Sprintf("stage-tp=%s names %d stages, pp=%d has %d", stageDegrees(s.TensorStages), len(s.TensorStages), s.P(), s.P())}
	case s.Context < 0:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("context %d: want at least 1", s.Context)}
	case s.Context > 1 && s.TensorStages != nil:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("cp=%d with stage-tp=%s: context parallelism is modelled with one tensor-parallel degree (use tp=)", s.Context, stageDegrees(s.TensorStages))}
	case s.TensorStages != nil && slices.Min(s.TensorStages) < 1:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("stage-tp=%s: want every degree at least 1", stageDegrees(s.TensorStages))}
	case s.SequenceParallel && s.MaxT() == 1:
		return &Error{Field: "strategy", Msg: "sp=on with tp=1: sequence parallelism splits over the tensor-parallel GPUs"}
	case s.TPOverlap && !s.SequenceParallel:
		return &Error{Field: "strategy", Msg: "tpoverlap=on without sp=on: tensor-parallel communication overlaps its GEMMs as all-gathers and reduce-scatters"}
	}
	switch s.Recompute {
	case NoRecompute, SelectiveRecompute, FullRecompute:
	default:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("recompute %q: want none, selective or full", s.Recompute)}
	}
	switch s.Schedule {
	case "", GPipe, OneFOneB:
	default:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("schedule %q: want gpipe or 1f1b", s.Schedule)}
	}
	switch s.Shard {
	case NoShard, FullShard, GradShard, OptimizerShard:
	default:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("shard %q: want fsdp, zero2, zero1 or none", s.Shard)}
	}
	// A plan at cluster scale may leave dp to the GPUs the other degrees
	// leave; its evaluator checks it then.
	if _, scaled := s.Scale(); s.Shard != NoShard && s.R() == 1 && (s.Replicas > 0 || !scaled) {
		return &Error{Field: "strategy", Msg: fmt.Sprintf("shard %s with one replica: sharding needs replicas to shard over", s.Shard)}
	}
	return nil
}

// CheckFor reports whether s can run a graph of global batch size batch
// (0 = the graph has no batch information) on gpus GPUs with a placement
// on devices GPUs per replica: R x devices = gpus, and each of the R x M
// micro-batches gets at least one sample. The fields of a transformer
// plan at cluster scale (Scale) are refused: an op graph's stages are its
// placement's.
func (s Strategy) CheckFor(batch, devices, gpus int) error {
	if err := s.Check(); err != nil {
		return err
	}
	if f, ok := s.Scale(); ok {
		return &Error{Field: "strategy", Msg: fmt.Sprintf("%s is for plans of a transformer at cluster scale (--workload gpt:... --cluster ...), not for a graph's placement", f)}
	}
	r, m := s.R(), s.M()
	if gpus > 0 && r*devices != gpus {
		if gpus%r != 0 {
			return &Error{Field: "strategy", Msg: fmt.Sprintf("%d replicas do not divide %d GPUs", r, gpus)}
		}
		return &Error{Field: "strategy", Msg: fmt.Sprintf("%d replicas of a %d-GPU placement take %d GPUs, not %d", r, devices, r*devices, gpus)}
	}
	if r*m == 1 {
		return nil
	}
	if batch == 0 {
		return &Error{Field: "strategy", Msg: fmt.Sprintf("%s splits the batch, and this graph has no batch information (no tensor says which dimension is the batch)", s)}
	}
	if r*m > batch {
		return &Error{Field: "strategy", Msg: fmt.Sprintf("%d replicas x %d micro-batches is more than the batch of %d samples", r, m, batch)}
	}
	return nil
}

// String writes s as ParseStrategy reads it, e.g. "dp=4,mb=8,schedule=1f1b";
// "" for the zero strategy.
func (s Strategy) String() string {
	var parts []string
	if s.Replicas > 1 {
		parts = append(parts, "dp="+strconv.Itoa(s.Replicas))
	}
	if s.MicroBatches > 1 {
		parts = append(parts, "mb="+strconv.Itoa(s.MicroBatches))
	}
	if s.Schedule != "" {
		parts = append(parts, "schedule="+string(s.Schedule))
	}
	if s.Shard != NoShard {
		parts = append(parts, "shard="+string(s.Shard))
	}
	if s.Tensor > 1 {
		parts = append(parts, "tp="+strconv.Itoa(s.Tensor))
	}
	if s.Context > 1 {
		parts = append(parts, "cp="+strconv.Itoa(s.Context))
	}
	if s.Pipeline > 1 {
		parts = append(parts, "pp="+strconv.Itoa(s.Pipeline))
	}
	if s.Virtual > 1 {
		parts = append(parts, "vp="+strconv.Itoa(s.Virtual))
	}
	if s.MicroBatchSize > 0 {
		parts = append(parts, "mbs="+strconv.Itoa(s.MicroBatchSize))
	}
	if s.SequenceParallel {
		parts = append(parts, "sp=on")
	}
	if s.Recompute != NoRecompute {
		parts = append(parts, "recompute="+string(s.Recompute))
	}
	if s.RecomputeLayers > 0 {
		parts = append(parts, "recompute-layers="+strconv.Itoa(s.RecomputeLayers))
	}
	if s.TPOverlap {
		parts = append(parts, "tpoverlap=on")
	}
	if s.FirstLayers > 0 {
		parts = append(parts, "first="+strconv.Itoa(s.FirstLayers))
	}
	if s.LastLayers > 0 {
		parts = append(parts, "last="+strconv.Itoa(s.LastLayers))
	}
	if s.TensorStages != nil {
		parts = append(parts, "stage-tp="+stageDegrees(s.TensorStages))
	}
	if s.BucketBytes > 0 {
		b := strconv.FormatInt(s.BucketBytes, 10)
		if s.BucketBytes%(1<<20) == 0 {
			b = strconv.FormatInt(s.BucketBytes>>20, 10) + "MiB"
		}
		parts = append(parts, "bucket="+b)
	}
	return strings.Join(parts, ",")
}

// ParseStrategy reads a strategy written as comma-separated key=value
// pairs: dp (replicas), mb (micro-batches), schedule (gpipe, 1f1b), shard
// (fsdp, zero2, zero1, none), bucket (DDP bucket bytes, or mebibytes with
// the suffix MiB: 25MiB); and for a transformer at cluster scale tp
// (tensor-parallel degree), cp (context-parallel degree: each sequence
// split over cp GPUs), pp (pipeline stages), vp (virtual stages per
// pipeline stage), mbs (micro-batch size), sp (sequence parallelism: on
// or off), tpoverlap (on: tensor-parallel communication overlapped with
// the GEMMs), recompute (none, selective, full), recompute-layers (with
// recompute=full: the layers of each model chunk that recompute), distopt (on:
// shard=zero1, Megatron-LM's distributed optimizer), first and last (the
// layers of the first and the last pipeline stage), stage-tp (each
// pipeline stage's tensor-parallel degree, colon-separated, in place of
// tp: stage-tp=4:8:8:4). "" is the zero strategy.
func ParseStrategy(text string) (Strategy, error) {
	var s Strategy
	if strings.TrimSpace(text) == "" {
		return s, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return s, fmt.Errorf("strategy %q: %q is not key=value (keys %s)", text, kv, strategyKeys)
		}
		if seen[k] {
			return s, fmt.Errorf("strategy %q: %q given twice", text, k)
		}
		if k == "shard" && seen["distopt"] {
			return s, fmt.Errorf("strategy %q: distopt and shard both given (distopt=on is shard=zero1)", text)
		}
		seen[k] = true
		var err error
		switch k {
		case "dp", "replicas":
			s.Replicas, err = positive(v)
		case "mb", "micro-batches", "micro_batches":
			s.MicroBatches, err = positive(v)
		case "schedule":
			s.Schedule = Schedule(strings.ToLower(v))
		case "shard":
			if strings.EqualFold(v, "none") || strings.EqualFold(v, "ddp") {
				s.Shard = NoShard
			} else {
				s.Shard = Shard(strings.ToLower(v))
			}
		case "bucket":
			var b int
			mib := strings.HasSuffix(v, "MiB")
			b, err = positive(strings.TrimSuffix(v, "MiB"))
			s.BucketBytes = int64(b)
			if mib {
				s.BucketBytes <<= 20
			}
		case "tp", "tensor":
			s.Tensor, err = positive(v)
		case "cp", "context", "context-parallel":
			s.Context, err = positive(v)
		case "pp", "pipeline":
			s.Pipeline, err = positive(v)
		case "vp", "virtual":
			s.Virtual, err = positive(v)
		case "mbs", "micro-batch-size", "micro_batch_size":
			s.MicroBatchSize, err = positive(v)
		case "sp", "sequence-parallel":
			s.SequenceParallel, err = onOff(v)
		case "recompute":
			if strings.EqualFold(v, "none") {
				s.Recompute = NoRecompute
			} else {
				s.Recompute = Recompute(strings.ToLower(v))
			}
		case "tpoverlap", "tp-comm-overlap":
			s.TPOverlap, err = onOff(v)
		case "recompute-layers", "recompute_layers":
			s.RecomputeLayers, err = positive(v)
		case "first", "first-stage-layers":
			s.FirstLayers, err = positive(v)
		case "last", "last-stage-layers":
			s.LastLayers, err = positive(v)
		case "stage-tp", "tensor-stages":
			s.TensorStages, err = degrees(v)
		case "distopt", "distributed-optimizer":
			var on bool
			if on, err = onOff(v); on {
				if seen["shard"] {
					return s, fmt.Errorf("strategy %q: distopt and shard both given (distopt=on is shard=zero1)", text)
				}
				s.Shard = OptimizerShard
			}
		default:
			return s, fmt.Errorf("strategy %q: unknown key %q (keys %s)", text, k, strategyKeys)
		}
		if err != nil {
			return s, fmt.Errorf("strategy %q: %s: %v", text, k, err)
		}
	}
	// A degree of 1 is the default's: written back it is left out.
	for _, d := range []*int{&s.Replicas, &s.MicroBatches, &s.Tensor, &s.Pipeline, &s.Virtual, &s.Context} {
		if *d == 1 {
			*d = 0
		}
	}
	if err := s.Check(); err != nil {
		return s, fmt.Errorf("strategy %q: %w", text, err)
	}
	return s, nil
}

// strategyKeys lists ParseStrategy's keys for its errors.
const strategyKeys = "dp, mb, schedule, shard, bucket, tp, cp, pp, vp, mbs, sp, tpoverlap, recompute, recompute-layers, distopt, first, last, stage-tp"

// stageDegrees writes per-stage degrees as ParseStrategy reads them:
// "4:8:8:4".
func stageDegrees(d []int) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ":")
}

// degrees reads "4:8:8:4".
func degrees(v string) ([]int, error) {
	var out []int
	for _, x := range strings.Split(v, ":") {
		n, err := positive(x)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func onOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", v)
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a whole number of at least 1", v)
	}
	return n, nil
}
