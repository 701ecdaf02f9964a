// Package placertorch holds placer_torch's Python sources (the exporter,
// its profiling, placer profile --model's measurements, opprofile.py, and
// placer profile --workload's, the subpackage profile), embedded so that
// the placer binary runs them from anywhere: jobs/profile's Run writes them to
// a temporary folder, puts it on PYTHONPATH and runs
// placer_torch.opprofile or placer_torch.profile.measure in the torch
// virtualenv.
//
// May import: no other placer package
package placertorch
