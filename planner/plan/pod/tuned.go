package pod

import (
	"fmt"
	"slices"
	"strconv"
)

// TunedConstant is a constant of the cost model chosen with published
// rows (docs/constants.md, kind "chosen with rows"): the value the model
// runs with, the published source sets whose rows chose it (the keys of
// published.SourceSets), and the value it would take without them (its
// first-principles or spec default). A source's rows scored with every
// constant they chose set to its Without value (Pod.WithoutSource) give
// that source's out-of-sample error: leave one source out.
//
// Constants measured on hardware (kernel benchmarks, held clocks,
// nccl-tests), fitted to such measurements or read from a spec or a
// framework's source are not tuned: docs/constants.md lists them with
// their kind.
type TunedConstant struct {
	// Name is the constant's Go name, as docs/constants.md lists it.
	Name string
	// Value is the value the model runs with; Without the value it takes
	// without the rows that chose it.
	Value, Without float64
	// Sources are the published source sets whose rows chose it; Rows
	// says which rows and how, in words.
	Sources []string
	Rows    string
	// Set writes v as the constant's value into pod p: the model reads
	// every tuned constant off the pod it costs (its kernels, its
	// margin), so that a pod carries a reading of the model.
	Set func(p *Pod, v float64)
}

// Tuned are the cost model's constants chosen with published rows, each
// declared once here beside its sources and its value without them
// (TestTunedInventory holds docs/constants.md to this list).
//
// None now: the one there was, DefaultMemoryMargin (6%, chosen with
// report megatron's searched plans), gave way to the verdict on the
// caching allocator's simulated reservation (memory.Peak).
var Tuned = []TunedConstant{}

// WithoutSource is pod p with every constant of tuned that source's rows
// chose set to its value without them, and what was reset ("Name
// value -> without", in tuned's order; none: no constant was chosen with
// that source, and p is returned as it is).
func (p Pod) WithoutSource(tuned []TunedConstant, source string) (Pod, []string) {
	var reset []string
	for _, c := range tuned {
		if !slices.Contains(c.Sources, source) {
			continue
		}
		c.Set(&p, c.Without)
		reset = append(reset, fmt.Sprintf("%s %s -> %s", c.Name, strconv.FormatFloat(c.Value, 'g', -1, 64), strconv.FormatFloat(c.Without, 'g', -1, 64)))
	}
	return p, reset
}
