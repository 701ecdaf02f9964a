package graph

// Phase is an op's phase in a pipelined step: the forward and backward
// passes run once per micro-batch; the update (ops whose work does not
// scale with the batch: optimizer steps, parameters, views and other ops
// without work) once per step.
type Phase int8

// The phases, in the order a micro-batch meets them.
const (
	PhaseForward Phase = iota
	PhaseBackward
	PhaseUpdate
)

// Phase is the op's phase: the update when none of its work scales with
// the batch (FLOPs and bytes all fixed, or none), else backward for an op
// of the backward pass, else forward.
func (op *Op) Phase() Phase {
	switch {
	case op.FLOPs <= op.FixedFLOPs && op.BytesRead <= op.FixedBytesRead && op.BytesWritten <= op.FixedBytesWritten:
		return PhaseUpdate
	case op.Backward:
		return PhaseBackward
	}
	return PhaseForward
}
