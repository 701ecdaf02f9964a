package decision

import (
	"fmt"
	"strconv"
	"strings"
)

// Strategy is how one training step of an op graph is split around the
// decision's placement (DESIGN §10). The placement (Device, Priority,
// Fusion) is one replica's; Replicas copies of it run data-parallel, each
// on its share of the global batch and on its own Devices GPUs (Replicas
// x devices in all), and each replica's share runs as MicroBatches
// micro-batches through the placement's stages in Schedule's order,
// gradients accumulated, the optimizer step once at the end. Shard says
// what the replicas shard among themselves. The zero value is one replica
// and one micro-batch: a decision of placer's first format, unchanged.
//
// A plan of a uniform transformer at cluster scale (tensor, context and
// pipeline parallelism, virtual stages, the micro-batch size, sequence
// parallelism, recomputation, the distributed optimizer) is another
// world's, planner/plan.Strategy: there every stage holds identical
// layers, so the stages are a count, not a placement. ParseStrategy
// refuses its keys.
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
	// the whole model, gradients all-reduced), parameters, gradients
	// and optimizer state (FSDP, ZeRO-3), or gradients and optimizer
	// state (ZeRO-2).
	Shard Shard `json:"shard,omitempty"`
	// BucketBytes is DDP's gradient bucket (0 = DefaultBucketBytes).
	BucketBytes int64 `json:"bucket_bytes,omitempty"`
}

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

// Equal reports whether s and o are the same strategy.
func (s Strategy) Equal(o Strategy) bool { return s == o }

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
	return s.R() == 1 && s.M() == 1 && s.Shard == NoShard && s.Schedule == "" && s.BucketBytes == 0
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
	}
	switch s.Schedule {
	case "", GPipe, OneFOneB:
	default:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("schedule %q: want gpipe or 1f1b", s.Schedule)}
	}
	switch s.Shard {
	case NoShard, FullShard, GradShard:
	case zero1:
		return &Error{Field: "strategy", Msg: "shard zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (want fsdp, zero2 or none)"}
	default:
		return &Error{Field: "strategy", Msg: fmt.Sprintf("shard %q: want fsdp, zero2 or none", s.Shard)}
	}
	if s.Shard != NoShard && s.R() == 1 {
		return &Error{Field: "strategy", Msg: fmt.Sprintf("shard %s with one replica: sharding needs replicas to shard over", s.Shard)}
	}
	return nil
}

// zero1 is the distributed optimizer's shard, a transformer's plan's at
// cluster scale (planner/plan.Strategy's DistOpt).
const zero1 Shard = "zero1"

// CheckFor reports whether s can run a graph of global batch size batch
// (0 = the graph has no batch information) on gpus GPUs with a placement
// on devices GPUs per replica: R x devices = gpus, and each of the R x M
// micro-batches gets at least one sample.
func (s Strategy) CheckFor(batch, devices, gpus int) error {
	if err := s.Check(); err != nil {
		return err
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
// (fsdp, zero2, none), bucket (DDP bucket bytes, or mebibytes with the
// suffix MiB: 25MiB). "" is the zero strategy. planKey, where not nil,
// says whether a key is one of a transformer's plan at cluster scale
// (tp, pp, vp, mbs, sp, ...: the caller's, planner/plan.IsKey):
// such a key, and shard=zero1, are refused each in one line that says
// whose they are, not as unknown. The text's form errors (a pair that is
// not key=value, a key given twice) are each one line.
func ParseStrategy(text string, planKey func(key string) bool) (Strategy, error) {
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
			switch {
			case strings.EqualFold(v, "none") || strings.EqualFold(v, "ddp"):
				s.Shard = NoShard
			case strings.EqualFold(v, string(zero1)):
				return s, fmt.Errorf("strategy %q: shard=zero1 (the distributed optimizer) is of a transformer's plan at cluster scale, not of an op graph's strategy (shard fsdp, zero2 or none)", text)
			default:
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
		default:
			if planKey != nil && planKey(k) {
				return s, fmt.Errorf("strategy %q: %s is a key of a transformer's plan at cluster scale, not of an op graph's strategy", text, k)
			}
			return s, fmt.Errorf("strategy %q: unknown key %q (keys %s)", text, k, strategyKeys)
		}
		if err != nil {
			return s, fmt.Errorf("strategy %q: %s: %v", text, k, err)
		}
	}
	// A degree of 1 is the default's: written back it is left out.
	for _, d := range []*int{&s.Replicas, &s.MicroBatches} {
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
const strategyKeys = "dp, mb, schedule, shard, bucket"

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a whole number of at least 1", v)
	}
	return n, nil
}
