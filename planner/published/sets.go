package published

// The published source sets: each publication whose rows placer is
// checked on, the runs published twice counted once (Korthikanti et
// al.'s A100 runs: Megatron-LM's README gives their MFU, the paper their
// iteration times; Megatron-Bridge's 25.11 table is one release of its
// archive). A sweep or a table row names its set (Sweep.Set, Row.Set);
// a constant chosen with published rows names the sets of those rows
// (plan.TunedConstant.Sources); a source's out-of-sample error is its
// rows' with the constants it chose reset (plan.Pod.WithoutSource).
const (
	SetMegatronLMH100    = "megatron-lm-h100"
	SetKorthikanti       = "korthikanti-2022"
	SetLlama3            = "llama3-405b"
	SetBridge            = "megatron-bridge"
	SetTorchtitanH100    = "torchtitan-h100-2024-12"
	SetTorchtitanA100    = "torchtitan-a100-2024-04"
	SetModelZoo          = "megatron-moe-model-zoo"
	SetMegatronMoEReadme = "megatron-core-moe-readme"
	SetBridgeBlackwell   = "megatron-bridge-blackwell"
	SetBridgeFineTune    = "megatron-bridge-finetune"
)

// The code bases beside InternEvo (sweeps_internevo.go) read from
// measurements/ (tools/measure/codebases/codebases_bench.py): flash-attention's
// training code and torchtitan's Trainy H200 runs, each with its own
// validation set (chosen before any row was predicted: the readers'
// flashattn_part and titanh200_part).
const (
	SetFlashAttn              = "flashattn-training-2023-01"
	SetFlashAttnValidation    = "flashattn-training-2023-01-validation"
	SetTorchtitanH200         = "torchtitan-h200-2025-06"
	SetTorchtitanH200Validate = "torchtitan-h200-2025-06-validation"
)

// Two more code bases read from measurements/ (tools/measure/codebases/codebases_bench.py):
// nanotron's scaling benchmarks (the Ultra-Scale Playbook's best
// configurations on H100) and IBM's fms-fsdp README tables, each with its
// own validation set (chosen before any row was predicted: the reader's
// nanotron_part and fms_part).
const (
	SetNanotron           = "nanotron-scaling-2025-02"
	SetNanotronValidation = "nanotron-scaling-2025-02-validation"
	SetFMSFSDP            = "fms-fsdp-2024-05"
	SetFMSFSDPValidation  = "fms-fsdp-2024-05-validation"
)

// InternEvo's published throughputs (measurements/internevo: its
// doc/en/train_performance.md at 34fc28d, read by
// tools/measure/codebases/codebases_bench.py): InternLM-7B on 8 to 1,024 A100s.
// The development rows are SetInternEvo's; the validation rows, chosen
// before any was predicted (the reader's internevo_part: the throughput
// table's tp=2 rows), SetInternEvoValidation's, reported as aggregates
// only and kept out of the checked table (CodebaseValidationSets).
const (
	SetInternEvo           = "internevo-2023-07"
	SetInternEvoValidation = "internevo-2023-07-validation"
)

// The published sources of torchao float8 rowwise rows: torchtitan's
// async tensor-parallel benchmarks of June 2025 (torchtitanAsyncTP) and
// torchao's float8 training benchmark on 8 H100s (torchaoFloat8).
const (
	SetTorchtitanAsyncTP = "torchtitan-h100-2025-06"
	SetTorchaoFloat8     = "torchao-float8-h100-2025-03"
)

// CodebaseValidationSets are the published source sets of the code
// bases' validation parts: the bench's validation part
// (bench.SweepPart), and no row of theirs in the checked table
// (CheckRows), so that no file prints them row by row.
func CodebaseValidationSets() []string {
	return []string{SetInternEvoValidation, SetFlashAttnValidation, SetTorchtitanH200Validate, SetNanotronValidation, SetFMSFSDPValidation}
}

// codeBases are the code bases of the sets whose rows placer reads on
// another code base's layers (no stack of their own, or torchtitan's
// eager Llama for fms-fsdp): the runs are theirs, so the stated error
// counts them as theirs (Sweep.CodeBase).
var codeBases = map[string]string{
	SetNanotron: "nanotron", SetNanotronValidation: "nanotron",
	SetFMSFSDP: "fms-fsdp", SetFMSFSDPValidation: "fms-fsdp",
	SetInternEvo: "internevo", SetInternEvoValidation: "internevo",
	SetFlashAttn: "flash-attention", SetFlashAttnValidation: "flash-attention",
}
