package planner

import (
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// h100 is the node of the dgx-h100 pod as planner/plan presets
// it: its measured kernels, their attention fits (cuDNN's first, torch's
// flash kernel second) and its held clock (Held), which the tests here
// recompute from the measurements.
var h100 = func() kernels.Node {
	p, err := plan.PodOf("dgx-h100", 1)
	if err != nil {
		panic(err)
	}
	return p.Kernels
}()
