package plans

import (
	"fmt"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// TorchTitanTransformer writes a transformer's plan at cluster scale
// (model m, resolved strategy s on gpus GPUs) as a torchtitan job
// configuration for release version ("" = 0.3): for 0.3 a Python module
// of config functions with these settings (titan03Transformer), for 0.2
// torchtitan 0.2.2's TOML (--job.config_file; field names of
// torchtitan/config/job_config.py):
//   - [training] local_batch_size (B / D, a data-parallel rank's step,
//     with a pipeline; the micro-batch size without: torchtitan
//     accumulates global / (local x D) of them),
//     global_batch_size and seq_len;
//   - [parallelism] data_parallel_replicate_degree (D for plain data
//     parallelism) or data_parallel_shard_degree (D with fsdp=on: FSDP2),
//     tensor_parallel_degree (torchtitan's tensor parallelism always shards
//     the norms' sequence: sp=on), enable_async_tensor_parallel (tpoverlap,
//     with [compile] enable, which it needs), pipeline_parallel_degree,
//     pipeline_parallel_schedule ("1F1B", or "Interleaved1F1B" with
//     virtual stages), module_fqns_per_model_part (each model part's
//     modules by torchtitan's names: tok_embeddings, layers.N, norm,
//     output; part j = v x P + d is stage d's v-th chunk, which
//     torchtitan's looped schedules run on pipeline rank j mod P: uneven
//     end stages included), pipeline_parallel_microbatch_size,
//     context_parallel_degree and expert_parallel_degree;
//   - [activation_checkpoint] mode "none" or "full";
//   - FP8 as the model converter quantize.linear.float8 with
//     [quantize.linear.float8] recipe_name "tensorwise" (fp8=current),
//     "rowwise" or "rowwise_with_gw_hp" (the output layer filtered out:
//     titan02Float8).
//
// What torchtitan's configuration cannot say, or torchtitan 0.2.2 does
// not run, is refused in one line naming the field: the distributed
// optimizer (ZeRO-1: FSDP2 shards the parameters and gradients too),
// plain data parallelism beside tensor, context or pipeline parallelism
// (its llama3 runs DDP only alone: "DDP has not supported > 1D
// parallelism"; fsdp=on), tensor parallelism without sequence
// parallelism, a tensor-parallel degree per stage, a sequence that 2 x tp
// x cp does not divide (its llama3 asserts it), selective or block
// recomputation (torchtitan's selective checkpointing is per layer or
// per op, not the attention core), GPipe with virtual stages, 1F1B with
// fewer micro-batches than stages and an interleaved schedule whose
// micro-batches are no multiple of its rounds (torch's schedules refuse
// them), FP8 delayed or blockwise scaling, grads=bf16
// (mixed_precision_reduce takes float32 only in 0.2.2), epoverlap=on,
// expert parallelism outside the data-parallel shard and context ranks it
// borrows (cp <= ep <= dp_shard x cp) or beside tensor parallelism. The
// model's name and flavor are torchtitan's own: the shape is written as a
// comment.
func TorchTitanTransformer(m transformer.Spec, s plan.Strategy, gpus int, version string) ([]byte, error) {
	rel, err := export.CheckedRelease("torchtitan", version)
	if err != nil {
		return nil, err
	}
	if s.TensorStages != nil {
		return nil, fmt.Errorf("export: torchtitan: parallelism.tensor_parallel_degree: stage-tp: torchtitan has one tensor-parallel degree")
	}
	T, P, D, C, V := s.TensorDegree(), s.PipelineDegree(), s.ReplicaCount(), s.ContextDegree(), s.VirtualStages()
	if T*C*P*D != gpus {
		return nil, fmt.Errorf("export: torchtitan: tp=%d x cp=%d x pp=%d x dp=%d is not the %d GPUs", T, C, P, D, gpus)
	}
	if s.MicroBatchSize < 1 || m.Batch%D != 0 || (m.Batch/D)%s.MicroBatchSize != 0 {
		return nil, fmt.Errorf("export: torchtitan: training.local_batch_size: the batch of %d does not split into %d data-parallel ranks of micro-batches of %d", m.Batch, D, s.MicroBatchSize)
	}
	micro := m.Batch / D / s.MicroBatchSize // torchtitan's n_microbatches
	if rel.Version == "0.3" {
		return titan03Transformer(m, s, gpus, rel)
	}
	runs := titanRunsErr(s, P, V, micro, rel.Version)
	switch {
	case s.DistOpt && !s.FSDP:
		return nil, fmt.Errorf("export: torchtitan: parallelism.data_parallel_shard_degree: distopt=on (the distributed optimizer, ZeRO-1) has no torchtitan setting (FSDP2 shards parameters and gradients too): use fsdp=on or distopt=off")
	case D > 1 && !s.FSDP && T*C*P > 1:
		return nil, fmt.Errorf("export: torchtitan: parallelism.data_parallel_replicate_degree: dp=%d without fsdp=on beside tp=%d, cp=%d, pp=%d: torchtitan %s's llama3 runs DDP only as the one parallelism (\"DDP has not supported > 1D parallelism\"): use fsdp=on", D, T, C, P, rel.Version)
	case T > 1 && !s.SequenceParallel:
		return nil, fmt.Errorf("export: torchtitan: parallelism.tensor_parallel_degree: torchtitan's tensor parallelism shards the norms' sequence (sp=on); the plan has sp=off")
	case m.Seq%(2*T*C) != 0:
		return nil, fmt.Errorf("export: torchtitan: training.seq_len: %d is not a multiple of 2 x tp x cp = %d, which torchtitan %s's llama3 asserts", m.Seq, 2*T*C, rel.Version)
	case s.Recompute == plan.SelectiveRecompute:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint.mode: recompute=selective (the attention core) is not torchtitan's selective checkpointing (per layer or per op)")
	case s.Recompute == plan.FullRecompute && s.RecomputeLayers > 0:
		return nil, fmt.Errorf("export: torchtitan: activation_checkpoint.mode: recompute-layers=%d (some layers of each chunk) has no torchtitan setting", s.RecomputeLayers)
	case runs != nil:
		return nil, runs
	case s.FP8 == plan.FP8MX || s.FP8 == plan.FP4NV:
		return nil, fmt.Errorf("export: torchtitan: model.converters: %s: placer writes no torchtitan MX or NVFP4 converter (its float8 export is tensorwise)", plan.PrecisionKey(s.FP8))
	case s.FP8 != "" && titan02Float8(s) == "":
		return nil, fmt.Errorf("export: torchtitan: quantize.linear.float8.recipe_name: fp8=%s; torchtitan's float8 recipes are tensorwise (current scaling), rowwise and rowwise_with_gw_hp", s.FP8)
	}
	shard := 1
	if s.FSDP {
		shard = D
	}
	if ep := s.ExpertDegree(); ep > 1 {
		switch {
		case T > 1:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d beside tp=%d: expert tensor parallelism is not written by placer", ep, T)
		case ep < C || ep > shard*C || (shard*C)%ep != 0:
			return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: ep=%d: torchtitan's experts borrow the data-parallel shard and context ranks (cp <= ep <= dp_shard x cp, dividing it): dp_shard=%d, cp=%d", ep, shard, C)
		}
	}
	if s.ExpertTensor > 1 {
		return nil, fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: etp=%d: expert tensor parallelism is not written by placer", s.ExpertTensor)
	}
	if err := unwritten("torchtitan", s, torchtitanKeys); err != nil {
		return nil, err
	}
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: %w", err)
	}
	model, margs, hasArgs, err := titanModelArgs(m, rel)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# torchtitan %s job configuration (TOML for --job.config_file; checked with torchtitan %s) written by placer export for %s\n", rel.Version, rel.Checked, m)
	fmt.Fprintf(&b, "# plan %s on %d GPUs (torchtitan's NGPU per node x nodes)\n", s, gpus)
	if hasArgs {
		// A job file names a registered flavor, never its fields: the
		// model args are for the user's flavor of torchtitan's model.
		fmt.Fprintf(&b, "# [model] name = %q and flavor: a flavor of these model args registered in its train spec (placer writes none); module FQNs are torchtitan's decoders' (tok_embeddings, layers.N, norm, output)\n", model)
		titanArgsComment(&b, model, margs, rel)
	} else {
		b.WriteString("# [model] name and flavor: torchtitan's model of this shape (placer writes none); module FQNs are torchtitan's decoders' (tok_embeddings, layers.N, norm, output)\n")
	}
	b.WriteString(titan02Float8(s))
	// torchtitan 0.2.2's Trainer runs global / (local x data-parallel
	// degree) forward and backward passes of local_batch_size samples a
	// step (gradient accumulation, torchtitan/train.py); with a pipeline
	// the local batch is the step's, cut into micro-batches of
	// pipeline_parallel_microbatch_size by the schedule. So: the step's
	// B / D with a pipeline, one micro-batch (mbs) without.
	local := m.Batch / D
	if P == 1 {
		local = s.MicroBatchSize
	}
	fmt.Fprintf(&b, "\n[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\n", local, m.Batch, m.Seq)
	switch {
	case s.TPOverlap:
		b.WriteString("\n[compile]\nenable = true  # async tensor parallelism takes effect only compiled\n")
	case s.Software.Compile == plan.On:
		b.WriteString("\n[compile]\nenable = true  # compile=on: the layers compiled, as placer costed them\n")
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
	if ep := s.ExpertDegree(); ep > 1 {
		fmt.Fprintf(&b, "expert_parallel_degree = %d\n", ep)
	}
	fmt.Fprintf(&b, "pipeline_parallel_degree = %d\n", P)
	if P > 1 {
		sched := "1F1B"
		switch {
		case V > 1:
			sched = "Interleaved1F1B"
		case titanGPipe(s, micro):
			sched = "GPipe"
		}
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\n", sched)
		fmt.Fprintf(&b, "pipeline_parallel_microbatch_size = %d\n", s.MicroBatchSize)
		parts, err := titanLayerParts(stages, V)
		if err != nil {
			return nil, err
		}
		b.WriteString(export.TOMLParts(parts))
	}
	mode := "none"
	if s.Recompute == plan.FullRecompute {
		mode = "full"
	}
	fmt.Fprintf(&b, "\n[activation_checkpoint]\nmode = %q\n", mode)
	return []byte(b.String()), nil
}

// titanLayerParts is module_fqns_per_model_part for stages of the given
// layers, V chunks each: part j = v x P + d holds stage d's v-th chunk
// (torchtitan's looped schedules run part j on pipeline rank j mod P, as
// Megatron-LM interleaves its chunks), the parts in model order; the
// embedding opens the first part, the final norm and the output close
// the last.
func titanLayerParts(stages []int, V int) ([][]string, error) {
	P := len(stages)
	for d, l := range stages {
		if l%V != 0 {
			return nil, fmt.Errorf("export: torchtitan: parallelism.module_fqns_per_model_part: stage %d's %d layers do not split into %d virtual stages", d, l, V)
		}
	}
	parts := make([][]string, 0, P*V)
	next := 0
	for j := range P * V {
		var q []string
		if j == 0 {
			q = append(q, "tok_embeddings")
		}
		for range stages[j%P] / V {
			q = append(q, fmt.Sprintf("layers.%d", next))
			next++
		}
		if j == P*V-1 {
			q = append(q, "norm", "output")
		}
		parts = append(parts, q)
	}
	return parts, nil
}

// titanGPipe reports whether plan s of micro micro-batches a step runs
// GPipe: named so, or naming no schedule with one micro-batch, as the plan
// reads it (plan.Strategy's Sched: GPipe where none is named; Resolve
// names 1F1B wherever there are more micro-batches, and with one the two
// schedules are the same steps). The plan's text then says
// schedule=gpipe, so that the strategy and its text export alike.
func titanGPipe(s plan.Strategy, micro int) bool {
	return s.Schedule == decision.GPipe || (s.Schedule == "" && micro == 1)
}

// titanRunsErr is what torchtitan's releases alike refuse of plan s (P
// stages of V virtual stages, micro micro-batches a step; version names
// the release in the words): GPipe with virtual stages, torch's 1F1B
// with fewer micro-batches than stages and its interleaved schedule with
// micro-batches no multiple of its rounds, Megatron-Core's all-to-all
// overlap, and gradients reduced in BF16; nil if none.
func titanRunsErr(s plan.Strategy, P, V, micro int, version string) error {
	switch {
	case P > 1 && titanGPipe(s, micro) && V > 1:
		return fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: gpipe with virtual stages")
	case P > 1 && V == 1 && !titanGPipe(s, micro) && micro < P:
		return fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_schedule: 1F1B with %d micro-batches on %d stages: torch's Schedule1F1B, which torchtitan runs, needs at least as many micro-batches as stages", micro, P)
	case P > 1 && V > 1 && micro%max(1, micro/P) != 0:
		return fmt.Errorf("export: torchtitan: parallelism.pipeline_parallel_microbatch_size: %d micro-batches on %d stages: torch's ScheduleInterleaved1F1B, which torchtitan runs, needs a multiple of its %d rounds", micro, P, max(1, micro/P))
	case s.EPOverlap:
		return fmt.Errorf("export: torchtitan: parallelism.expert_parallel_degree: epoverlap=on (Megatron-Core's all-to-all overlap across micro-batches) has no torchtitan setting")
	case s.GradBF16:
		return fmt.Errorf("export: torchtitan: training.mixed_precision_reduce: grads=bf16: torchtitan %s reduces in float32 only (the field's one value)", version)
	}
	return titanFineTuneErr(s, version)
}
