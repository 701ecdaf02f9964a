// Package rounds runs training in synchronous rounds that any number of
// worker processes share through a folder (on one machine, or on a
// cluster's shared file system). Round r's Workers steps (r*Workers ...
// r*Workers+Workers-1) all start from round r's state; each step is
// claimed (package claim: one worker runs it, a dead worker's step is
// taken over) and kept as a file (created atomically); when a round's
// steps are all kept, any worker writes the next round's state, created
// only if absent: the model's mean of the steps' states, in step order.
// Every worker that gets there computes the same bytes, so the same seed
// and the same Workers give the same model whichever process ran which
// step and however many processes there were. The folder is the
// checkpoint: a worker started later, or again, goes on from the last
// round.
//
// The driver (Run) is the claim / keep / mean / next-round loop; a model
// brings its state's encoding, its step and its mean (a network trained
// with Adam brings nn.TrainState's).
//
// May import: internal/...
package rounds
