package plan

// NVIDIA's MLPerf BERT code (training_results_v3.0-v4.0
// NVIDIA/benchmarks/bert/implementations/pytorch: run_pretraining.py, its
// README and config_*.sh): plain PyTorch with apex, FP16 under apex's AMP
// (--fp16), its fused multi-head attention (--fused_bias_mha,
// --pad_fmha/--unpad_fmha: NVIDIA's fmha kernels), fused bias + GeLU and
// fused layer norms (apex's), DistributedDataParallel's gradient
// all-reduce overlapped with the backward (or apex's DistributedFusedLAMB,
// --distributed_lamb, sharding the optimizer over the data-parallel
// ranks: distopt=on on the row), LAMB (You et al., arXiv 1904.00962) in
// place of Adam, and CUDA graphs where the row's config sets
// --use_cuda_graph (graphs= on the row); with --use_transformer_engine2
// (the H100 and H200 configs) the blocks' four GEMMs in FP8 with
// Transformer Engine's delayed scaling (te_layers.py: fp8=delayed on the
// row, planner/bench/bert.go). Its layers are costed as the
// fused layer costs are (placer's fused kernels: one fused attention, a
// fused bias + GeLU, fused norms), the attention as the pod's kernels
// run it: unfused where the row runs no fmha (attention=unfused on the
// cluster, bench/bert.go) and on the A100 pods, whose default it is;
// what is its own is the optimizer (Settings.LAMB, mechanisms/lamb.go).
const StackNVIDIABERT = "nvidia-bert-mlperf"

func init() {
	if err := AddStack(NamedStack{Name: StackNVIDIABERT,
		Settings: Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff, LAMB: true},
		Source: "NVIDIA's MLPerf Training BERT (training_results_v3.0-v4.0 NVIDIA/benchmarks/bert/implementations/pytorch: " +
			"run_pretraining.py --fp16 --fused_bias_mha --fused_bias_fc --distributed_lamb, apex's FusedLAMB/DistributedFusedLAMB)"}); err != nil {
		panic(err)
	}
}
