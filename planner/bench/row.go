package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/placer/placer/measurements/mlperf"
)

// Row is one MLPerf submission as runs.csv holds it (the columns
// measurements/mlperf/README.md describes; booleans 1/0, "" where the
// mirror does not say).
type Row struct {
	ID, Round, Part, Submitter, System, Benchmark string
	GPU                                           string // H100, H200, B200, A100, L40S, ...
	// Accelerator is the system description's accelerator name (its
	// form factor: SXM or PCIe).
	Accelerator              string
	GPUs, Nodes, GPUsPerNode int
	GPUMemGiB                float64
	Framework                string
	// The host as the system description states it: its CPU model and
	// sockets a node, the compute network's NICs a node and each one's
	// line rate in Gb/s (0: not stated; the mirror's tools/measure/mlperf
	// host_network reads them), the GPUs' interconnect and their link to
	// the host, as written.
	HostCPU                                   string
	HostSockets, HostNICs                     int
	HostNICGbps                               float64
	GPUInterconnect, GPUHostLink              string
	TP, PP, VP, CP, DP, MBS, GBS, Seq         int
	SP                                        string
	FP8, FP8Format, FP8AmaxHistory, FP8Params string
	FP8DPA, FP8Activation                     string
	// FP8ReduceAmax is the recipe's reduce_amax (1/0); AmaxDPInterval
	// and AmaxAsync Transformer Engine's NVTE_DP_AMAX_REDUCE_INTERVAL and
	// NVTE_ASYNC_AMAX_REDUCTION as the config exports them ("": unset).
	FP8ReduceAmax, AmaxDPInterval, AmaxAsync string
	// TERevision, NeMoRevision and MegatronRevision are the revisions
	// of Transformer Engine, NeMo and Megatron-LM the Dockerfile beside
	// the config installs ("": none said).
	TERevision, NeMoRevision, MegatronRevision string
	RecomputeGranularity, RecomputeMethod      string
	RecomputeLayers                            int
	CUDAGraph, CPUOffload, AllocConf           string
	LoRARank, LoRAAlpha                        int
	LoRATargets                                string
	// NoTransposeCache is NeMo's disable_parameter_transpose_cache
	// (1/0); HiddenDropout and LoRADropout the recipe's hidden_dropout
	// and adapter_dropout as written ("": not said); CPUOffloadLayers
	// cpu_offloading_num_layers.
	NoTransposeCache, HiddenDropout, LoRADropout string
	// LoRAA2A is NeMo's a2a_experimental (LORA_A2A; 1/0, "": not said),
	// LoRADropoutRecompute its dropout_recompute
	// (NEMO_LORA_USE_THUNDER_DROPOUT; 1/0, "": not said).
	LoRAA2A, LoRADropoutRecompute string
	// CPCommType is Megatron-Core's --cp-comm-type as the config sets it
	// (cp_comm_type: "a2a", ...; "": not said, the p2p ring).
	CPCommType                      string
	CPUOffloadLayers                int
	DistOptimizer, TPOverlap, Sharp string
	// Connections is CUDA_DEVICE_MAX_CONNECTIONS as the config scripts
	// export it (runs.csv connections; "" where they do not).
	Connections string
	// PPEmbedLayer and PPLossLayer are Megatron-Core's
	// account_for_embedding_in_pipeline_split and
	// account_for_loss_in_pipeline_split (runs.csv pp_embed_layer,
	// pp_loss_layer; 1/0, "" where not said): placer's embedding-layer=on
	// and loss-layer=on.
	PPEmbedLayer, PPLossLayer string
	// MCoreCUDAGraph is Megatron-Core's own per-layer CUDA graphs as the
	// config exports MCORE_CUDA_GRAPH (runs.csv mcore_cuda_graph; 1/0,
	// "": not said).
	MCoreCUDAGraph string
	// BERT's recipe (measurements/mlperf/README.md): gradient
	// accumulation, samples a packed sequence, precision, optimizer, its
	// fused attention, unpadding, MLM head on masked positions only,
	// CUDA graph mode, DDP, and every switch read.
	GradAccum, Packing                                    int
	Precision, Optimizer, FusedMHA, Unpad, DenseSeqOutput string
	CUDAGraphMode, DDP, RecipeFlags                       string
	// GraphIterations is --max_iterations_per_graph under the
	// full_iteration graph mode: the steps of one graph (0: not read).
	GraphIterations int
	// SameLogsAs is the earlier submission whose runs these are (every
	// result file's run_start and run_stop at the same millisecond): a
	// resubmission, not a new measurement.
	SameLogsAs string
	// StepSeconds is the median over the submission's result files of
	// each file's step time (0: none timed); StepMethod how it was read.
	StepSeconds           float64
	StepMin, StepMax      float64
	Results               int
	StepMethod            string
	ConfigMatch, Config   string
	YAMLDefaults, FromLog string
}

// Measured says the row has a step time.
func (r Row) Measured() bool { return r.StepSeconds > 0 }

// Sweep is the row's sweep: one benchmark of one round on one GPU, the
// plans measured side by side under one MLPerf round's rules.
func (r Row) Sweep() string { return r.Round + " " + r.Benchmark + " " + r.GPU }

// Rows are runs.csv's rows.
func Rows() ([]Row, error) { return Parse(bytes.NewReader(mlperf.RunsCSV)) }

// Parse reads a runs.csv. An error names the line and column.
func Parse(in io.Reader) ([]Row, error) {
	cr := csv.NewReader(in)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("runs.csv: header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"id", "round", "benchmark", "gpu", "gpus", "step_s"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("runs.csv: no column %q", need)
		}
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("runs.csv: %w", err)
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var bad error
		num := func(k string) int {
			s := get(k)
			if s == "" {
				return 0
			}
			n, err := strconv.Atoi(s)
			if err != nil && bad == nil {
				bad = fmt.Errorf("runs.csv line %d: %s %q is not a whole number", line, k, s)
			}
			return n
		}
		real := func(k string) float64 {
			s := get(k)
			if s == "" {
				return 0
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("runs.csv line %d: %s %q is not a number", line, k, s)
			}
			return f
		}
		r := Row{ID: get("id"), Round: get("round"), Part: get("part"), Submitter: get("submitter"), System: get("system"),
			Benchmark: get("benchmark"), GPU: get("gpu"), GPUs: num("gpus"), Nodes: num("nodes"), GPUsPerNode: num("gpus_per_node"),
			GPUMemGiB: real("gpu_mem_gib"), Framework: get("framework"),
			HostCPU: get("host_cpu"), HostSockets: num("host_sockets"), HostNICs: num("host_nics"), HostNICGbps: real("host_nic_gbps"),
			GPUInterconnect: get("gpu_interconnect"), GPUHostLink: get("gpu_host_link"),
			TP: num("tp"), PP: num("pp"), VP: num("vp"), CP: num("cp"), DP: num("dp"), MBS: num("mbs"), GBS: num("gbs"), Seq: num("seq_len"),
			SP: get("sp"), FP8: get("fp8"), FP8Format: get("fp8_format"), FP8AmaxHistory: get("fp8_amax_history"), FP8Params: get("fp8_params"),
			FP8DPA: get("fp8_dpa"), FP8Activation: get("fp8_activation"),
			FP8ReduceAmax: get("fp8_reduce_amax"), AmaxDPInterval: get("amax_dp_interval"), AmaxAsync: get("amax_async"),
			TERevision: get("te_revision"), NeMoRevision: get("nemo_revision"), MegatronRevision: get("megatron_revision"),
			RecomputeGranularity: get("recompute_granularity"), RecomputeMethod: get("recompute_method"), RecomputeLayers: num("recompute_layers"),
			CUDAGraph: get("cuda_graph"), CPUOffload: get("cpu_offload"), AllocConf: get("alloc_conf"),
			LoRARank: num("lora_rank"), LoRAAlpha: num("lora_alpha"), LoRATargets: get("lora_targets"),
			NoTransposeCache: get("no_transpose_cache"), HiddenDropout: get("hidden_dropout"), LoRADropout: get("lora_dropout"),
			LoRAA2A: get("lora_a2a"), LoRADropoutRecompute: get("lora_dropout_recompute"), CPCommType: get("cp_comm_type"), CPUOffloadLayers: num("cpu_offload_layers"),
			GradAccum: num("grad_accum"), Packing: num("packing"), Precision: get("precision"), Optimizer: get("optimizer"),
			FusedMHA: get("fused_mha"), Unpad: get("unpad"), DenseSeqOutput: get("dense_seq_output"),
			CUDAGraphMode: get("cuda_graph_mode"), GraphIterations: num("graph_iterations"), DDP: get("ddp"), RecipeFlags: get("recipe_flags"), SameLogsAs: get("same_logs_as"),
			Accelerator:   get("accelerator"),
			DistOptimizer: get("dist_optimizer"), TPOverlap: get("tp_comm_overlap"), Sharp: get("sharp"), Connections: get("connections"),
			PPEmbedLayer: get("pp_embed_layer"), PPLossLayer: get("pp_loss_layer"), MCoreCUDAGraph: get("mcore_cuda_graph"),
			StepSeconds: real("step_s"), StepMin: real("step_s_min"), StepMax: real("step_s_max"), Results: num("n_results"),
			StepMethod: get("step_method"), ConfigMatch: get("config_match"), Config: get("config_path"),
			YAMLDefaults: get("yaml_defaults"), FromLog: get("from_log_config")}
		if bad != nil {
			return nil, bad
		}
		if want := PartOf(r.Round, r.Benchmark, r.GPU); r.Part != "" && r.Part != want {
			return nil, fmt.Errorf("runs.csv line %d: %s is in the %s part, the rule puts round %s's %s on %s in the %s part", line, r.ID, r.Part, r.Round, r.Benchmark, r.GPU, want)
		}
		rows = append(rows, r)
	}
}

// Reading is a row as placer eval reads it, what of the row the reading
// assumes where the mirror is silent, and what of its recipe placer has
// no key for (left out of the prediction).
type Reading struct {
	Workload, Cluster, Strategy string
	Assumed, LeftOut            []string
}
