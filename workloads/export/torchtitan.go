package export

import (
	"fmt"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/graph/transformer"
)

// TorchTitanTransformer writes a transformer's plan at cluster scale
// (model m, resolved strategy s on gpus GPUs) as a torchtitan job
// configuration (TOML; field names of torchtitan/config/job_config.py):
//   - [training] local_batch_size (B / D, a data-parallel rank's),
//     global_batch_size and seq_len;
//   - [parallelism] data_parallel_replicate_degree (D for plain data
//     parallelism) or data_parallel_shard_degree (D with fsdp=on: FSDP2),
//     tensor_parallel_degree (torchtitan's tensor parallelism always shards
//     the norms' sequence: sp=on), enable_async_tensor_parallel (tpoverlap,
//     with [training] compile, which it needs), pipeline_parallel_degree,
//     pipeline_parallel_schedule ("1F1B", or "Interleaved1F1B" with
//     virtual stages), pipeline_parallel_split_points (the first layer of
//     every stage but the first, "layers.N": uneven end stages included),
//     pipeline_parallel_microbatch_size, context_parallel_degree and
//     expert_parallel_degree;
//   - [activation_checkpoint] mode "none" or "full";
//   - FP8 current scaling as the float8 converter with recipe_name
//     "tensorwise";
//   - grads=bf16 with fsdp=on as [training] mixed_precision_reduce
//     "bfloat16" (FSDP2's reduce-scatter in BF16).
//
// What torchtitan's configuration cannot say is refused in one line
// naming the field: the distributed optimizer (ZeRO-1: FSDP2 shards the
// parameters and gradients too), tensor parallelism without sequence
// parallelism, a tensor-parallel degree per stage, selective or block
// recomputation (torchtitan's selective checkpointing is per layer or per
// op, not the attention core), GPipe, FP8 delayed or blockwise scaling,
// grads=bf16 without fsdp=on (torchtitan's reduction dtype is FSDP's only),
// epoverlap=on,
// expert parallelism outside the data-parallel shard and context ranks it
// borrows (cp <= ep <= dp_shard x cp) or beside tensor parallelism. The
// model's name and flavor are torchtitan's own: the shape is written as a
// comment.
func TorchTitanTransformer(m transformer.Spec, s scale.Strategy, gpus int) ([]byte, error) {
	if s.TensorStages != nil {
		return nil, fmt.Errorf("export: torchtitan: parallelism.tensor_parallel_degree: stage-tp: torchtitan has one tensor-parallel degree")
	}
	T, P, D, C, V := s.T(), s.P(), s.R(), s.C(), s.V()
	if T*C*P*D != gpus {
		return nil, fmt.Errorf("export: torchtitan: tp=%d x cp=%d x pp=%d x dp=%d is not the %d GPUs", T, C, P, D, gpus)
	}
	if s.MicroBatchSize < 1 || m.Batch%D != 0 || (m.Batch/D)%s.MicroBatchSize != 0 {
		return nil, fmt.Errorf("export: torchtitan: training.local_batch_size: the batch of %d does not split into %d data-parallel ranks of micro-batches of %d", m.Batch, D, s.MicroBatchSize)
	}
	switch {
	case s.DistOpt && !s.FSDP:
		return nil, fmt.Errorf("export: torchtitan: parallelism.data_parallel_shard_degree: distopt=on (the distributed optimizer, ZeRO-1) has no torchtitan setting (FSDP2 shards parameters and gradients too): use fsdp=on or distopt=off")
	case T > 1 && !s.SequenceParallel:
		return nil, fmt.Errorf("export: torchtitan: parallelism.tensor_parallel_degree: torchtitan's tensor parallelism shards the norms' sequence (sp=on); the plan has sp=off")
	case s.Recompute == scale.SelectiveRecompute:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint.mode: recompute=selective (the attention core) is not torchtitan's selective checkpointing (per layer or per op)")
	case s.Recompute == scale.FullRecompute && s.RecomputeLayers > 0:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint.mode: recompute-layers=%d (some layers of each chunk) has no torchtitan setting", s.RecomputeLayers)
	case P > 1 && s.Schedule == decision.GPipe && V > 1:
		return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: gpipe with virtual stages")
	case s.EPOverlap:
		return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: epoverlap=on (Megatron-Core's all-to-all overlap across micro-batches) has no torchtitan setting")
	case s.GradBF16 && !s.FSDP:
		return nil, fmt.Errorf("export: torchtitan: training.mixed_precision_reduce: grads=bf16 without fsdp=on: torchtitan reduces in BF16 only under FSDP (data_parallel_shard_degree > 1)")
	case s.FP8 != "" && s.FP8 != scale.FP8Current:
		return nil, fmt.Errorf("export: torchtitan: float8.recipe_name: fp8=%s; torchtitan's float8 recipes are tensorwise (current scaling) and rowwise", s.FP8)
	}
	shard := 1
	if s.FSDP {
		shard = D
	}
	if ep := s.EP(); ep > 1 {
		switch {
		case T > 1:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d beside tp=%d: expert tensor parallelism is not a field of torchtitan's job configuration", ep, T)
		case ep < C || ep > shard*C || (shard*C)%ep != 0:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d: torchtitan's experts borrow the data-parallel shard and context ranks (cp <= ep <= dp_shard x cp, dividing it): dp_shard=%d, cp=%d", ep, shard, C)
		}
	}
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_split_points: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan job configuration written by placer export for %s\n", m)
	fmt.Fprintf(&b, "# plan %s on %d GPUs (torchtitan's NGPU per node x nodes)\n", s, gpus)
	b.WriteString("# [model] name and flavor: torchtitan's model of this shape (placer writes none)\n")
	if s.FP8 == scale.FP8Current {
		b.WriteString("\n[model]\nconverters = [\"float8\"]\n\n[float8]\nrecipe_name = \"tensorwise\"\n")
	}
	fmt.Fprintf(&b, "\n[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\n", m.Batch/D, m.Batch, m.Seq)
	if s.TPOverlap {
		b.WriteString("compile = true  # async tensor parallelism takes effect only compiled\n")
	}
	if s.GradBF16 {
		b.WriteString("mixed_precision_reduce = \"bfloat16\"\n")
	}
	b.WriteString("\n[parallelism]\n")
	if s.FSDP {
		fmt.Fprintf(&b, "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = %d\n", D)
	} else {
		fmt.Fprintf(&b, "data_parallel_replicate_degree = %d\ndata_parallel_shard_degree = 1\n", D)
	}
	fmt.Fprintf(&b, "tensor_parallel_degree = %d\n", T)
	if s.TPOverlap {
		b.WriteString("enable_async_tensor_parallel = true\n")
	}
	fmt.Fprintf(&b, "context_parallel_degree = %d\n", C)
	if ep := s.EP(); ep > 1 {
		fmt.Fprintf(&b, "expert_parallel_degree = %d\n", ep)
	}
	fmt.Fprintf(&b, "pipeline_parallel_degree = %d\n", P)
	if P > 1 {
		sched := "1F1B"
		switch {
		case V > 1:
			sched = "Interleaved1F1B"
		case s.Schedule == decision.GPipe:
			sched = "GPipe"
		}
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\n", sched)
		// The first layer of every (virtual) stage but the first: a
		// device's layers split evenly over its V chunks.
		var points []string
		next := 0
		for i, l := range stages {
			if l%V != 0 {
				return nil, fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_split_points: stage %d's %d layers do not split into %d virtual stages", i, l, V)
			}
			for range V {
				if next > 0 {
					points = append(points, fmt.Sprintf("%q", fmt.Sprintf("layers.%d", next)))
				}
				next += l / V
			}
		}
		fmt.Fprintf(&b, "pipeline_parallel_split_points = [%s]\n", strings.Join(points, ", "))
		fmt.Fprintf(&b, "pipeline_parallel_microbatch_size = %d\n", s.MicroBatchSize)
	}
	mode := "none"
	if s.Recompute == scale.FullRecompute {
		mode = "full"
	}
	fmt.Fprintf(&b, "\n[activation_checkpoint]\nmode = %q\n", mode)
	return []byte(b.String()), nil
}
