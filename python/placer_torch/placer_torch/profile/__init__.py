"""placer profile --workload's measurements and the CPU loops that check
its predictions (docs/profile.md). Run each as a module
(python -m placer_torch.profile.X): the placer binary unpacks
placer_torch to a temporary folder and runs measure so.

    measure    the layers' shard shapes, the ends, the optimizer and the
               collectives timed on this machine's device (placer profile
               runs it; one JSON object a line)
    layers     one Llama (Mixtral's and DeepSeek's layers, latent
               attention, sliding windows) as plain PyTorch builds it,
               with Megatron-style tensor shards (placer_torch.collectives)
    fp8        a layer under an FP8 recipe (Transformer Engine, else
               torchao-style scaled GEMMs)
    runs       timed training steps of the layers under each plan on
               gloo CPU processes: what a CPU profile predicts
    cpuloop,   profile, predict, then run on this machine's CPU (make
    moeloop    test-profile-cpu and test-profile-cpu-moe: the path; make
               bench-profile-cpu and bench-profile-cpu-moe: the accuracy)
    loopcheck  what the loops check: the path's rules, the benchmarks'
               figures with their spread
    sweep      a one-GPU sweep of micro-batch and recomputation
    eagerops   the ATen ops a layer issues under eager PyTorch, as
               placer_torch.exporter records them (planner's tests)
"""
