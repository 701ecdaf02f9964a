// Package placertorch holds placer_torch's Python sources (the exporter,
// its profiling and placer profile --model's measurements, opprofile.py),
// embedded so that the placer binary runs them from anywhere:
// jobs.Profile writes them to a temporary folder and runs
// placer_torch.opprofile in the torch virtualenv.
//
// May import: no other placer package
package placertorch
