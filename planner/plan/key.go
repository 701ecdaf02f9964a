package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// Key is one key of a plan written as text (--strategy, ParseStrategy),
// declared once in Keys: its names, what it takes, its default, its line
// for the docs, how String and Plan.String write it, and which exports
// write a setting for it. ParseStrategy, String, Plan.String,
// StrategyKeys, IsKey, KeyName, Written and the exports'
// refusals (workloads/export/plans) all read Keys; the docs' key tables are
// tested against it (TestDocsKeyTables).
type Key struct {
	// Name is the key as String writes it; Aliases are the other
	// spellings ParseStrategy reads (the frameworks' flag names).
	Name    string
	Aliases []string
	// Values is what the key takes ("on|off", "N", ...) and Default what
	// a plan left without it has, as the docs say them.
	Values, Default string
	// Help is what the key does, in one line.
	Help string
	// Doc is the file whose key table has the key's row.
	Doc string
	// Exports are the export targets (ExportMegatron, ...) that write a
	// setting for the key; the others refuse a plan that writes it
	// (workloads/export/plans).
	Exports []string
	// group is where String and Plan.String write the key: String
	// writes the groups in their order, Plan.String its degrees first
	// (planGroups); inside a group, Keys' order.
	group keyGroup
	// set sets the key to v in s (seen: the keys given so far, as
	// written, this one among them). A refusal (a whole sentence) is
	// written after the strategy alone; another error after the key too.
	set func(s *Strategy, v string, seen map[string]bool) error
	// write is the key's value in s as String writes it; "": not written
	// (its default, or another key writes it).
	write func(s Strategy) string
	// planWrite is Plan.String's value where it is not write's of the
	// plan's strategy (nil: write's).
	planWrite func(pl Plan) string
	// Writes is, for a key declared outside this package (AddKey), what
	// each export target among Exports writes for the key's value v (a
	// value other than its default): Megatron-LM's arguments, as words
	// (DeclaredWrites). Keys' own keys are written by the exports' code.
	Writes map[string]func(v string) []string
	// Resolved refuses, for a declared key set to v, a plan pl of model
	// m that the key does not go with (a whole sentence; Resolve writes
	// it after the strategy); nil: none.
	Resolved func(m *transformer.Spec, pl *Plan, v string) error
}

// The export targets of Key.Exports, as the exports name themselves.
const (
	ExportMegatron    = "megatron"
	ExportBridge      = "megatron-bridge"
	ExportTorchtitan  = "torchtitan"
	ExportDeepSpeed   = "deepspeed"
	ExportTorchPlan   = "torch-plan"
	docClusterScale   = "docs/cluster-scale.md"
	docStacks         = "docs/stacks.md"
	docDecisionFormat = "docs/decision-format.md"
)

// keyGroup is where a key is written in a plan's text (Key.group).
type keyGroup uint8

// The groups, in String's order.
const (
	groupBatch     keyGroup = iota // dp, mb, schedule, shard
	groupDegrees                   // tp, cp, pp, vp, mbs
	groupSP                        // sp
	groupRecompute                 // recompute and its modules and layers
	groupOverlap                   // the overlaps, the queues, distopt (Plan.String's)
	groupStages                    // the pipeline's end stages, stage-tp
	groupRest                      // experts, precision, sharding, fine-tuning, memory, software
	numGroups
)

// planGroups is Plan.String's order after its degrees: the overlaps
// before recomputation, the schedule last.
var planGroups = []keyGroup{groupSP, groupOverlap, groupRecompute, groupStages, groupRest, groupBatch}

// refusal is a set error that is a whole sentence: written after the
// strategy, not after the key.
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

// never is planWrite for a key Plan.String writes among its degrees, or
// not at all.
func never(Plan) string { return "" }

// onOffKey is a key of a switch (on|off, default off) at field f.
func onOffKey(k Key, f func(*Strategy) *bool) Key {
	k.Values, k.Default = "on|off", "off"
	k.set = func(s *Strategy, v string, _ map[string]bool) (err error) {
		*f(s), err = onOff(v)
		return err
	}
	k.write = func(s Strategy) string { return map[bool]string{true: "on"}[*f(&s)] }
	return k
}

// countKey is a key of a whole number of at least 1 at field f, written
// where it is above over.
func countKey(k Key, over int, f func(*Strategy) *int) Key {
	if k.Values == "" {
		k.Values = "N"
	}
	k.set = func(s *Strategy, v string, _ map[string]bool) (err error) {
		*f(s), err = positive(v)
		return err
	}
	k.write = func(s Strategy) string {
		if n := *f(&s); n > over {
			return strconv.Itoa(n)
		}
		return ""
	}
	return k
}

// toggleKey is a software setting at field f: on, off or the stack's.
func toggleKey(k Key, f func(*Strategy) *Toggle) Key {
	k.Values, k.Doc, k.group = "on|off", docStacks, groupRest
	if k.Default == "" {
		k.Default = "the stack's"
	}
	k.set = func(s *Strategy, v string, _ map[string]bool) error {
		on, err := onOff(v)
		if err != nil {
			return err
		}
		*f(s) = Off
		if on {
			*f(s) = On
		}
		return nil
	}
	k.write = func(s Strategy) string { return map[Toggle]string{On: "on", Off: "off"}[*f(&s)] }
	return k
}

// float is v's value, or "" at 0.
func float(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func onOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", v)
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxDegree {
		return 0, fmt.Errorf("%q is not a whole number of at least 1 and at most %d", v, MaxDegree)
	}
	return n, nil
}

// MaxDegree is the largest count a strategy's key takes (a degree, a
// micro-batch size, a stage's layers): 2^20, past any pod's GPUs, any
// batch and any model's layers, and small enough that the products its
// checks form (tp x cp x pp x dp, dp x mbs) stay inside int64 (pp=2^62
// made a slice of 2^62 stages and panicked).
const MaxDegree = 1 << 20

// degrees reads "4:8:8:4".
func degrees(v string) ([]int, error) {
	var out []int
	for _, x := range strings.Split(v, ":") {
		n, err := positive(x)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// stageTP writes per-stage degrees as stage-tp reads them: "4:8:8:4".
func stageTP(d []int) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ":")
}

// SwitchKey is k as a switch held in Strategy.Declared (on|off, default
// off; written where on, among the software's and the other keys of
// groupRest): a key that a plug-in declares in its own file and
// registers with itself (AddKey), with no field of its own.
func SwitchKey(k Key) Key {
	k.Values, k.Default, k.group = "on|off", "off", groupRest
	k.set = func(s *Strategy, v string, _ map[string]bool) error {
		on, err := onOff(v)
		if err != nil {
			return err
		}
		s.Declared = s.Declared.with(k.Name, map[bool]string{true: "on"}[on])
		return nil
	}
	k.write = func(s Strategy) string { return s.Declared.Value(k.Name) }
	return k
}

// CountKey is k as a positive whole number held in Strategy.Declared
// (values N >= 1, default off: not written): a ValueKey that says a
// size, as SwitchKey's says on or off. Declared.Count reads it.
func CountKey(k Key) Key {
	k.Values, k.Default = "N", "off"
	return ValueKey(k, func(v string) (string, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", fmt.Errorf("want a whole number >= 1, got %q", v)
		}
		return strconv.Itoa(n), nil
	})
}

// ValueKey is k as a key of values held in Strategy.Declared, read by
// parse: the value as String writes it ("": the default, left out of
// the plan's text), or why v is not one of k's values (written after the
// key). k's Values and Default say what it takes, as the docs write
// them; it is written among the software's and the other keys of
// groupRest.
func ValueKey(k Key, parse func(v string) (string, error)) Key {
	k.group = groupRest
	k.set = func(s *Strategy, v string, _ map[string]bool) error {
		w, err := parse(v)
		if err != nil {
			return err
		}
		s.Declared = s.Declared.with(k.Name, w)
		return nil
	}
	k.write = func(s Strategy) string { return s.Declared.Value(k.Name) }
	return k
}
