package eager

// Keep is how long an eager op's output is held in the trace.
type Keep uint8

const (
	// KeepNext is a temporary, freed once the op at index until (the
	// next op where until is 0) has run.
	KeepNext Keep = iota
	// KeepSaved is saved for the backward (autograd's saved tensors, or
	// the view of it one saves): freed once the backward op at index
	// until has run, else at the end of its part's backward. Under full
	// recomputation the checkpoint saves none of them: a temporary in
	// the forward, saved in the backward's recomputation.
	KeepSaved
	// KeepCache is autocast's BF16 copy of an FP32 weight: cached to the
	// end of the autocast region (torch.autocast's weight cache, cleared
	// when the outermost region exits) and saved by its GEMM; under
	// full recomputation freed at the region's end and made again by
	// the recomputation.
	KeepCache
	// KeepCarry is the part's output, the next part's input: freed at
	// the end of the next part's backward (the norm that reads it saves
	// it; under recomputation the next checkpoint keeps it).
	KeepCarry
	// KeepGrad is a parameter's .grad, made by AccumulateGrad on the
	// step's first micro-batch (the gradient None after zero_grad with
	// set_to_none) and added to in place after: held to the next
	// zero_grad.
	KeepGrad
	// KeepNone allocates nothing: an op writing into another's output
	// (copy_) or an empty whose bytes its filler counts.
	KeepNone
)
