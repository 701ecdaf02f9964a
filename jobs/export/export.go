package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
	"github.com/placer/placer/workloads/costgraph"
	"github.com/placer/placer/workloads/export"
	planexport "github.com/placer/placer/workloads/export/plans"
	"github.com/placer/placer/workloads/msrfiddle"
)

// Formats lists the placement formats `placer export` writes.
var Formats = []string{"tf-device-map", "costgraph", "msr-fiddle", "module-map", "torch-plan", "torchtitan", "deepspeed", "decision", "megatron", "megatron-bridge"}

// FormatsOf lists the formats of Formats that a workload of
// world w exports to: a transformer at cluster scale's plan goes to the
// frameworks that run one; an op graph's placement to every other.
func FormatsOf(w inputs.World) []string {
	if w == inputs.ClusterScale {
		return []string{"torch-plan", "torchtitan", "deepspeed", "megatron", "megatron-bridge"}
	}
	return slices.DeleteFunc(slices.Clone(Formats), func(f string) bool { return f == "megatron" || f == "megatron-bridge" })
}

// Options are the inputs of `placer export` in either world: the
// world of the workload, decided once by the caller (inputs.WorldOf),
// what both worlds read, and each world's own (the other's are not
// read).
type Options struct {
	World   inputs.World
	OpGraph GraphOptions // an op graph's
	Scale   ScaleOptions // a transformer's at cluster scale

	// Placement is "single", "round-robin", a decision or result file, or
	// an msr-fiddle expert-placement file ({"fpgas": ...}); at cluster
	// scale a plan file, as Plan.
	Placement string
	To        string // one of Formats
	// Strategy replaces the placement file's strategy for torch-plan,
	// torchtitan and deepspeed ("dp=2,mb=4,schedule=1f1b"; "" = the
	// file's, else one replica and one micro-batch). As in eval
	// (GPUsRule), its R replicas each get GPUs / R of the cluster's
	// GPUs, and the placement is one replica's on them. At cluster scale
	// the plan ("tp=8,pp=4").
	Strategy string
	Out      string // "" = return the bytes only
	// Plan is a file holding the plan to write: at cluster scale a
	// search's result (placer search -o: its best plan) or an eval report
	// (placer eval -o), checked against the workload and the cluster; for
	// an op graph what Placement reads. "" = Placement's file, else
	// Strategy. Plan and Strategy are not given together (PlanRule).
	Plan string
	// Warn gets a line for what the user should know about the plan
	// (its train-mode modules: TrainModeOf; nil = none).
	Warn io.Writer

	profile *profile.Profile // OpGraph.Cluster.Profile's, read
}

// GraphOptions are an op graph's export options.
type GraphOptions struct {
	Graph inputs.GraphSpec
	// Cluster is the GPUs: every GPU, as search and eval read --gpus, so
	// that a strategy of R replicas, --strategy's or the placement
	// file's, places one on GPUs / R (GPUsRule; 0 = the placement file's
	// replica GPUs x R, else the graph file's, else 1). Only GPUs and
	// Profile (an ops profile: the graph it holds and its meta) are read.
	Cluster inputs.ClusterSpec
	Meta    string // the exporter's meta file (module-map, torch-plan; "" = beside the graph: X.meta.json)
	// Stages, for a graph from PyTorch (torch-plan, torchtitan,
	// deepspeed), cuts the placement into exactly that many stages (0 =
	// as many as keep the most work where the placement put it).
	Stages int
}

// ScaleOptions are a transformer's export options at cluster
// scale.
type ScaleOptions struct {
	// Workload is the model: "gpt:...", "llama:...", "hf:..." or a
	// preset with its run.
	Workload string
	// Pod is the pod (Pod "" = DGX H100 nodes for GPUs), with a layers
	// profile pricing what it measured; MemoryMargin 0: none.
	Pod inputs.PodSpec
	// AllowOver writes a plan that does not fit the GPUs' memory, with a
	// line on Warn; false refuses it.
	AllowOver bool
}

// Run is placer export: it converts a placement of a graph, or a
// transformer's plan at cluster scale, into a framework's format and
// returns what it wrote.
func Run(o Options) ([]byte, error) {
	var err error
	if o.Placement, err = PlanOrPlacement(o.Plan, o.Placement); err != nil {
		return nil, err
	}
	if o.World == inputs.ClusterScale {
		return exportTransformer(o)
	}
	g, meta, pr, err := inputs.ProfiledGraph(o.OpGraph.Graph, o.OpGraph.Cluster)
	if err != nil {
		return nil, err
	}
	o.profile = pr
	// msr-fiddle names nodes by id: read them when the graph is one.
	var ids []int64
	if o.OpGraph.Graph.Path != "" {
		if data, err := bounded.ReadFile(o.OpGraph.Graph.Path, bounded.Graph, "a graph file"); err == nil && inputs.IsGraphFormat(o.OpGraph.Graph, data, "msr-fiddle") {
			if _, _, ids, err = msrfiddle.DecodeWithIDs(data, g.Name()); err != nil {
				return nil, err
			}
		}
	}
	// --gpus is every GPU, as search and eval read it (GPUsRule): a
	// strategy of R replicas (--strategy, else the placement file's)
	// places one replica on GPUs / R of them.
	st, err := StrategyOf(o.Strategy, o.Placement)
	if err != nil {
		return nil, err
	}
	var dev []int
	devices := 0 // one replica's GPUs
	if data, err := bounded.ReadFile(o.Placement, bounded.Decision, "a placement file"); err == nil && inputs.PlacementFormat(data) == inputs.PlacementMSRFiddle {
		if dev, err = msrfiddle.ReadExpert(data, g, ids); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Placement, err)
		}
		if o.OpGraph.Cluster.GPUs > 0 {
			if o.OpGraph.Cluster.GPUs%st.R() != 0 {
				return nil, fmt.Errorf("--gpus %d: %d replicas do not divide %d GPUs (--gpus is every GPU; each replica's placement gets GPUs / replicas)", o.OpGraph.Cluster.GPUs, st.R(), o.OpGraph.Cluster.GPUs)
			}
			devices = o.OpGraph.Cluster.GPUs / st.R()
		}
	} else {
		gpus, err := ReplicaCluster(o.OpGraph.Cluster.GPUs, st, o.Placement)
		if err != nil {
			return nil, err
		}
		if gpus == 0 {
			gpus = max(meta.Devices, 1) // the graph file's
		}
		if gpus%st.R() != 0 {
			return nil, fmt.Errorf("export: %d replicas do not divide the %d GPUs of the graph file (give --gpus: every GPU, each replica's placement on GPUs / replicas)", st.R(), gpus)
		}
		devices = gpus / st.R()
		if dev, err = inputs.Placement(o.Placement, g, devices); err != nil {
			return nil, err
		}
	}
	for _, k := range dev {
		devices = max(devices, k+1)
	}
	format, version, err := export.SplitFormat(o.To)
	if err != nil {
		return nil, err
	}
	var out, pipeline []byte
	var trainMode *TrainMode // what the torch plan changes in train mode
	switch format {
	case "tf-device-map":
		m, err := export.DeviceMap(g, dev)
		if err != nil {
			return nil, err
		}
		if out, err = json.MarshalIndent(m, "", "  "); err != nil {
			return nil, err
		}
		out = append(out, '\n')
	case "costgraph":
		if out, err = costgraph.EncodeWithDevices(g, dev); err != nil {
			return nil, err
		}
	case "msr-fiddle":
		if out, err = msrfiddle.WriteExpert(g, dev, devices, ids); err != nil {
			return nil, err
		}
	case "module-map":
		tm, err := o.torchMeta(g)
		if err != nil {
			return nil, err
		}
		mm, err := export.NewModuleMap(g, tm, dev, devices)
		if err != nil {
			return nil, err
		}
		if out, err = json.MarshalIndent(mm, "", "  "); err != nil {
			return nil, err
		}
		out = append(out, '\n')
	case "torch-plan", "torchtitan", "deepspeed":
		tp, tm, err := o.torchPlan(g, dev, devices, st)
		if err != nil {
			return nil, err
		}
		trainMode = TrainModeOf(tm, st, len(tp.Stages), g.Batch())
		switch format {
		case "torchtitan":
			classes := map[string]string{}
			for _, m := range tm.Modules {
				classes[m.Path] = m.Class
			}
			out, err = export.TorchTitanConfig(tp, version, classes)
		case "deepspeed":
			// A pipeline is DeepSpeed's PipelineModule in Python, beside
			// the configuration.
			out, pipeline, err = export.DeepSpeedConfig(tp, version, filepath.Base(o.Out))
			if err == nil && pipeline != nil && o.Out == "" {
				err = fmt.Errorf("export: deepspeed: a pipeline of %d stages is DeepSpeed's PipelineModule in Python, written beside the configuration: give -o FILE (its module goes to %s)", len(tp.Stages), export.DeepSpeedPipelinePath("FILE.json"))
			}
		default:
			out, err = json.MarshalIndent(tp, "", "  ")
			out = append(out, '\n')
		}
		if err != nil {
			return nil, err
		}
	case "decision":
		var buf bytes.Buffer
		if err := decision.Write(&buf, g, devices, decision.Decision{Device: dev}); err != nil {
			return nil, err
		}
		out = buf.Bytes()
	default:
		return nil, fmt.Errorf("export: unknown format %q (want one of %s)", o.To, strings.Join(Formats, ", "))
	}
	if o.Out != "" {
		// The pipeline module first: the configuration appears with it.
		if pipeline != nil {
			if err := atomicfile.WriteBytes(export.DeepSpeedPipelinePath(o.Out), pipeline); err != nil {
				return nil, err
			}
		}
		if err := atomicfile.WriteBytes(o.Out, out); err != nil {
			return nil, err
		}
	}
	// A plan of several pieces (replicas, micro-batches or stages) whose
	// model has train-mode modules it changes says so, once written.
	if trainMode != nil && o.Warn != nil {
		fmt.Fprintf(o.Warn, "export: %s\n", trainMode.Line)
	}
	if o.Warn != nil {
		where := "standard output"
		if o.Out != "" {
			where = o.Out
			if pipeline != nil {
				where += " and " + export.DeepSpeedPipelinePath(o.Out)
			}
		}
		gpus := fmt.Sprintf("%d GPUs", devices)
		if devices == 1 {
			gpus = "1 GPU"
		}
		fmt.Fprintf(o.Warn, "export: wrote %s (%s): the placement of %s (%d ops) on %s a replica\n", where, graphFile(format, version), g.Name(), g.NumOps(), gpus)
	}
	return out, nil
}

// graphFile names what export writes of an op graph's placement for
// format at version.
func graphFile(format, version string) string {
	switch format {
	case "tf-device-map":
		return "TensorFlow's device map"
	case "costgraph":
		return "TensorFlow's CostGraphDef text"
	case "msr-fiddle":
		return "msr-fiddle's expert placement"
	case "module-map":
		return "a module map"
	case "decision":
		return "a placer decision file"
	}
	return frameworkFile(format, version)
}

// torchPlan is the torch plan of placement dev of g, one replica's on
// devices GPUs, with strategy s around it (--strategy, else the
// placement file's): R x devices GPUs in all, as eval scores it
// (GPUsRule).
func (o Options) torchPlan(g *graph.Graph, dev []int, devices int, s decision.Strategy) (*export.TorchPlan, *export.TorchMeta, error) {
	tm, err := o.torchMeta(g)
	if err != nil {
		return nil, nil, err
	}
	tp, err := o.torchPlanOf(g, tm, dev, devices, s)
	if err != nil {
		return nil, nil, err
	}
	return tp, tm, nil
}

// torchPlanOf is torchPlan with the exporter's meta tm read.
func (o Options) torchPlanOf(g *graph.Graph, tm *export.TorchMeta, dev []int, devices int, s decision.Strategy) (*export.TorchPlan, error) {
	if err := s.CheckFor(g.Batch(), devices, s.R()*devices); err != nil {
		return nil, fmt.Errorf("export: torch-plan: %w", err)
	}
	rz, err := export.NewRealizer(g, tm)
	if err != nil {
		return nil, err
	}
	if o.OpGraph.Stages < 0 || o.OpGraph.Stages > devices {
		return nil, fmt.Errorf("export: --stages %d: want 1 to the %d GPUs of a replica", o.OpGraph.Stages, devices)
	}
	if n := len(rz.Units()); o.OpGraph.Stages > n {
		return nil, fmt.Errorf("export: --stages %d: graph %s has %d modules to cut", o.OpGraph.Stages, g.Name(), n)
	}
	rz.Stages = o.OpGraph.Stages
	return rz.Plan(dev, devices, s)
}

// torchMeta is the exporter's meta of g: an ops profile's (--profile),
// else the file metaPath names.
func (o Options) torchMeta(g *graph.Graph) (*export.TorchMeta, error) {
	if o.profile != nil {
		tm, err := ProfileMeta(o.profile, o.OpGraph.Cluster.Profile, g)
		if err == nil && tm == nil {
			err = fmt.Errorf("export: profile %s holds no meta of its graph (placer profile --model writes it)", o.OpGraph.Cluster.Profile)
		}
		return tm, err
	}
	return export.ReadTorchMeta(o.metaPath(), g)
}

// metaPath is the exporter's meta file: --meta, else X.meta.json beside
// the graph X.json.
func (o Options) metaPath() string {
	if o.OpGraph.Meta != "" {
		return o.OpGraph.Meta
	}
	return strings.TrimSuffix(o.OpGraph.Graph.Path, ".json") + ".meta.json"
}

// searchCommand is the placer search that finds o's plans that export
// to format on pod p: the same workload, the same cluster (and layers
// profile and margin where given) and --for the format's framework
// (--for any for torch-plan, placer's own, which runs every plan): a
// hint that runs as written (TestExportHintsRun).
func searchCommand(o Options, p plan.Pod, format string) string {
	forName := format
	if !slices.Contains(planexport.SearchTargets, format) {
		forName = "any"
	}
	cmd := fmt.Sprintf("placer search --workload %s --cluster %s --for %s", o.Scale.Workload, p.Name, forName)
	if pr := o.Scale.Pod.Profile; pr != "" {
		cmd += " --profile " + pr
	}
	if mm := o.Scale.Pod.MemoryMargin; mm > 0 {
		cmd += fmt.Sprintf(" --memory-margin %g", mm)
	}
	return cmd
}

// exportTransformer writes a transformer's plan at cluster scale as a
// version-2 torch plan (tools/dev/torchplan runs it with torch.distributed),
// as Megatron-LM's arguments (a bash array for pretrain_gpt.py) or as a
// torchtitan job configuration.
func exportTransformer(o Options) ([]byte, error) {
	format, version, err := export.SplitFormat(o.To)
	if err != nil {
		return nil, err
	}
	if format != "torch-plan" && format != "megatron" && format != "megatron-bridge" && format != "torchtitan" && format != "deepspeed" {
		return nil, fmt.Errorf("export: a transformer by its shape (%s) exports only --to torch-plan, --to megatron, --to megatron-bridge, --to torchtitan or --to deepspeed", o.Scale.Workload)
	}
	m, p, err := inputs.Transformer(o.Scale.Workload, o.Scale.Pod)
	if err != nil {
		return nil, err
	}
	ep, err := o.TransformerPlan(m, p, format)
	if err != nil {
		return nil, err
	}
	pl, over := ep.Plan, ep.over
	// A plan the framework cannot run: the search that proposes only
	// plans it runs.
	forHint := func(err error) error {
		if errors.As(err, new(planexport.ModelError)) {
			return err // no plan of this model runs there
		}
		return fmt.Errorf("%w; %s proposes only plans it runs", err, searchCommand(o, p, format))
	}
	var out, moe []byte
	if format == "deepspeed" {
		// The experts are DeepSpeed-MoE's layers in Python, beside the
		// configuration.
		if out, moe, err = planexport.DeepSpeedTransformer(m, pl.Strategy, p.GPUs(), version, filepath.Base(o.Out)); err != nil {
			return nil, forHint(err)
		}
		if moe != nil && o.Out == "" {
			return nil, fmt.Errorf("export: deepspeed: the experts are DeepSpeed-MoE's layers in Python, written beside the configuration: give -o FILE (its module goes to %s)", planexport.DeepSpeedMoEPath("FILE.json"))
		}
	} else if format == "torchtitan" {
		if out, err = planexport.TorchTitanTransformer(m, pl.Strategy, p.GPUs(), version); err != nil {
			return nil, forHint(err)
		}
	} else if format == "megatron" {
		args, err := planexport.MegatronArgs(m, pl.Strategy, p.GPUs())
		if err != nil {
			return nil, forHint(err)
		}
		out = []byte(planexport.MegatronScript(m, pl.String(), p.GPUs(), p.HostGPUs(), args))
	} else if format == "megatron-bridge" {
		ov, err := planexport.BridgeOverrides(m, pl.Strategy, p.GPUs())
		if err != nil {
			return nil, forHint(err)
		}
		out = []byte(planexport.BridgeScript(m, pl.String(), pl.Strategy, p.GPUs(), p.HostGPUs(), ov))
	} else {
		tp, err := planexport.NewTransformerPlan(m, pl.Strategy, p.GPUs())
		if err != nil {
			return nil, err
		}
		if out, err = json.MarshalIndent(tp, "", "  "); err != nil {
			return nil, err
		}
		out = append(out, '\n')
	}
	if over != "" && !o.Scale.AllowOver {
		return nil, fmt.Errorf("export: %s (%s -o FILE finds plans that fit, --plan FILE exports its best; --allow-over writes this one anyway)", over, searchCommand(o, p, format))
	}
	if o.Out != "" {
		if moe != nil { // the module first: the configuration appears with it
			if err := atomicfile.WriteBytes(planexport.DeepSpeedMoEPath(o.Out), moe); err != nil {
				return nil, err
			}
		}
		if err := atomicfile.WriteBytes(o.Out, out); err != nil {
			return nil, err
		}
	}
	if over != "" && o.Warn != nil {
		fmt.Fprintf(o.Warn, "export: warning: %s (written as --allow-over asks)\n", over)
	}
	if o.Warn != nil {
		if ep.given != nil {
			fmt.Fprintln(o.Warn, "export: "+convertedLine(ep, o.Placement, format))
		}
		fmt.Fprintln(o.Warn, "export: "+wroteLine(o.Out, moe, format, version, ep))
	}
	return out, nil
}

// frameworkFile names what export writes for format at version.
func frameworkFile(format, version string) string {
	switch {
	case format == "torchtitan" && version == "0.2":
		return "torchtitan 0.2's TOML"
	case format == "torchtitan":
		return "torchtitan " + version + "'s config module"
	case format == "megatron":
		return "Megatron-LM's arguments"
	case format == "megatron-bridge":
		return "Megatron-Bridge " + planexport.BridgeRelease + "'s overrides"
	case format == "deepspeed":
		return "DeepSpeed " + version + "'s configuration"
	}
	return "a torch plan"
}

// stackShort is a stack as export's lines name it.
func stackShort(si plan.StackInfo) string {
	switch {
	case si.Name == "default" && si.Compiled:
		return "placer's default stack"
	case si.Name == "default":
		return "placer's default stack, eager"
	case si.Framework == plan.FrameworkMegatron:
		return si.Name
	case si.Compiled:
		return si.Name + " compiled"
	}
	return si.Name + " eager"
}

// wroteLine says what export wrote: the file (or standard output), for
// which framework, and the plan's step time on the stack the file runs
// (the plan is the file's own header).
func wroteLine(out string, moe []byte, format, version string, ep ScalePlan) string {
	where := "standard output"
	if out != "" {
		where = out
		if moe != nil {
			where += " and " + planexport.DeepSpeedMoEPath(out)
		}
	}
	on, note := costedOn(ep.Plan.Stack(), format, version)
	line := fmt.Sprintf("wrote %s (%s): %s a step on %s", where, frameworkFile(format, version), report.Seconds(ep.r.Step), on)
	if note != "" {
		line += "\nexport: " + note
	}
	return line
}

// costedOn is the stack a plan written for format at version is costed
// on, as wroteLine names it, and a note where that stack is the
// framework's at another version (torchtitan 0.3's file costed on the
// stack read from torchtitan 0.2.0's code, the only torchtitan stack
// placer has): "0.3's config module ... on torchtitan-0.2" read as a
// mistake.
func costedOn(si plan.StackInfo, format, version string) (on, note string) {
	on = stackShort(si)
	if v, ok := strings.CutPrefix(si.Name, format+"-"); ok && version != "" && v != version {
		how := "eager"
		if si.Compiled {
			how = "compiled"
		}
		on = fmt.Sprintf("placer's %s stack, %s", format, how)
		note = fmt.Sprintf("placer's %s stack is %s, read from %s %s's code (none of %s's own)", format, si.Name, format, v, version)
	}
	return on, note
}

// convertedLine says that the plan given was costed on another stack
// than format's file runs, and so was costed again (wroteLine says at
// what step time).
func convertedLine(ep ScalePlan, file, format string) string {
	from := "--strategy's plan"
	if ep.file.Strategy != "" {
		from = file + "'s plan"
		if ep.file.For != "" {
			from += " (for " + ep.file.For + ")"
		}
	}
	return fmt.Sprintf("%s: %s a step on %s; costed again on the stack %s runs", from, report.Seconds(ep.given.Step), stackShort(ep.given.Plan.Stack()), format)
}

// PlanOrPlacement is the file eval and export read a plan from: --plan
// (a search's or eval's -o file), which for an op graph is what
// --placement reads, or --placement itself; both naming files is a
// usage error.
func PlanOrPlacement(plan, placement string) (string, error) {
	if plan == "" {
		return placement, nil
	}
	if placement != "" && placement != "single" && placement != plan {
		return "", fail.Usagef("--plan %s and --placement %s both name the plan: give one", plan, placement)
	}
	return plan, nil
}

// PlanRule is where export at cluster scale takes its plan from:
// one source, never two merged.
const PlanRule = `At cluster scale the plan comes from one place: --plan FILE (or
--placement FILE), a search's -o result (its best plan) or an eval's -o
report, made for the same workload and cluster; else --strategy; else
the plan every degree left to placer resolves to. --strategy beside a
plan file is refused: the file's plan is what was searched and
evaluated, and a plan with some keys changed is another plan (export
it with --strategy alone, written whole). A plan that does not fit the
GPUs' memory is refused; --allow-over writes it with a warning.`

// ScalePlan is the plan export writes at cluster scale and what it
// says of it.
type ScalePlan struct {
	// Plan is the plan, resolved.
	Plan plan.Plan
	// r is Plan's cost on the stack the framework's file runs.
	r planner.Result
	// over says how far Plan is over the GPUs' memory ("": it fits).
	over string
	// file is the plan file's record (Strategy "" without one).
	file PlanFile
	// given is the plan as the file or --strategy gave it, and its cost,
	// where that was on another stack than the framework's file runs
	// (nil: the plan is written as given).
	given *planner.Result
}

// TransformerPlan is the plan export writes at cluster scale for format
// (PlanRule): a plan file's, checked against model m on pod p,
// else --strategy's, resolved, and costed on the stack format's file
// runs: a plan costed on another (a search for Megatron-LM's plan
// written for torchtitan, whose file runs compiled torchtitan) is costed
// again on the framework's stack (export.AsRunOn), its other keys kept.
// One that does not fit p's GPUs there is an error unless o.Scale.AllowOver:
// over says how far it is over. placer eval reads its plan file here too
// (format "": costed on the stack the file records), so that what export
// writes of a file is what eval costs of it.
func (o Options) TransformerPlan(m transformer.Spec, p plan.Pod, format string) (ep ScalePlan, err error) {
	file := ""
	if o.Placement != "" && o.Placement != "single" {
		file = o.Placement
	}
	text := o.Strategy
	if file != "" {
		if file == "round-robin" {
			return ep, fail.Usagef("--placement round-robin: a transformer at cluster scale (%s) takes its plan from --strategy or a search's or eval's result (--plan FILE)", o.Scale.Workload)
		}
		if o.Strategy != "" {
			return ep, fail.Usagef("--strategy and the plan file %s both give the plan: give one (the file's is the plan searched and evaluated; --strategy alone gives a plan written whole)", file)
		}
		if ep.file, err = ReadPlanFile(file, m, p); err != nil {
			return ep, err
		}
		text = ep.file.Strategy
	}
	s, err := plan.ParseStrategy(text)
	if err != nil {
		if file != "" {
			return ep, fmt.Errorf("%s: %w", file, err)
		}
		return ep, fail.Usagef("--strategy: %w", err)
	}
	pl, err := plan.Resolve(m, s, p)
	if err != nil {
		if file == "" {
			err = fail.AsUsage(err) // --strategy's plan does not fit this model and pod
		}
		return ep, err
	}
	if file != "" && pl.String() != text {
		// The file's plan is written resolved: read back, it is itself.
		return ep, fmt.Errorf("%s: plan %s resolves to %s on %s: not the plan the file holds", file, text, pl.String(), p.Name)
	}
	if sw, converted := planexport.AsRunOn(format, s.Software); converted {
		given, err := planner.Evaluate(m, pl.Strategy, p)
		if err != nil {
			return ep, err
		}
		ep.given = &given
		s.Software = sw
		if pl, err = plan.Resolve(m, s, p); err != nil {
			return ep, fmt.Errorf("export: %s: plan %s on %s's stack (%s): %w", format, pl.String(), format, strategyKeysOf(sw), err)
		}
	}
	r, err := planner.Evaluate(m, pl.Strategy, p)
	if err != nil {
		return ep, err
	}
	ep.Plan, ep.r = pl, r
	if !r.Fits {
		ep.over = overWords(pl, r, p)
	}
	return ep, nil
}

// overWords says how far plan pl's result r on pod p is over the memory
// a GPU (a CPU pod's process) leaves it: the figure eval's memory line
// judges (the caching allocator's simulated need where it weighed it)
// against the same usable memory, at the precision that tells them
// apart (report.GBApart).
func overWords(pl plan.Plan, r planner.Result, p plan.Pod) string {
	rank := "GPU"
	if p.CPU() {
		rank = "process" // its share of the host's memory less the margin
	}
	need, usable, _ := plans.GBApart(max(r.Judged, r.Memory), r.Usable)
	what := ""
	if r.Judged > r.Memory {
		what = fmt.Sprintf(" (what PyTorch's caching allocator, simulated, needs for its %s allocated)", plans.GB(r.Memory))
	}
	return fmt.Sprintf("plan %s needs %s a %s%s, more than the %s usable a %s of %s has for it", pl.String(), need, rank, what, usable, rank, p.Name)
}

// strategyKeysOf is software sw's keys as a strategy writes them
// ("placer's default stack" for none).
func strategyKeysOf(sw plan.Software) string {
	if k := (plan.Plan{Strategy: plan.Strategy{Software: sw}}).Stack().Keys; k != "" {
		return k
	}
	return "placer's default stack"
}

// scalePlanFile is the part of a cluster-scale result file (placer eval
// -o's report.ScalePlan, or placer search -o's report.ScaleSearch: its
// best) that export reads.
type scalePlanFile struct {
	Model    string `json:"model"`
	Cluster  string `json:"cluster"`
	GPUs     int    `json:"gpus"`
	Strategy string `json:"strategy"`
	// Stack is the stack the plan was costed on (nil in a file written
	// before placer recorded it: its strategy's stack= and compile= keys
	// say the same).
	Stack *plan.StackInfo `json:"stack"`
	Step  float64         `json:"step_s"`
}

// PlanFile is the plan a search's or eval's result file holds (a
// search's best) and what it was made for.
type PlanFile struct {
	// Strategy is the plan, resolved (plan.Plan.String).
	Strategy string
	// For is the framework the search proposed plans for (placer search
	// --for: megatron, torchtitan, deepspeed, any); "" for an eval's report
	// or a file written before placer recorded it.
	For string
	// Stack is the software stack the plan was costed on (its strategy's
	// stack= and compile= keys, or placer's default): whose run, compiled
	// or eager. Nil in a file written before placer recorded it.
	Stack *plan.StackInfo
	// Step is the step time the file gives the plan, in seconds.
	Step float64
}

// ReadPlanFile is the plan a search's or eval's result file holds (a
// search's best) with what the file says it was searched for and costed
// on, refused where the file is not one or was made for another model or
// cluster than m on p.
func ReadPlanFile(path string, m transformer.Spec, p plan.Pod) (PlanFile, error) {
	data, err := bounded.ReadFile(path, bounded.Config, "a plan file")
	if err != nil {
		return PlanFile{}, fmt.Errorf("plan file %s: cannot read it: %s", path, reason(err))
	}
	var f struct {
		scalePlanFile
		Best   *scalePlanFile `json:"best"`
		For    string         `json:"for"`
		Format string         `json:"format"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return PlanFile{}, fmt.Errorf("plan file %s: not a placer search or eval result (JSON: %v)", path, err)
	}
	if f.Format == profile.Format {
		return PlanFile{}, fmt.Errorf("plan file %s: a profile (placer profile's), not a plan: give it as --profile FILE", path)
	}
	pf := f.scalePlanFile
	if f.Best != nil {
		pf = *f.Best
	}
	switch {
	case pf.Model == "" || pf.Strategy == "" && pf.Cluster == "":
		return PlanFile{}, fmt.Errorf("plan file %s: not a placer search or eval result at cluster scale (no model and strategy: placer search -o or placer eval -o of a --workload gpt:, llama: or hf: writes one)", path)
	case pf.Model != m.String():
		return PlanFile{}, fmt.Errorf("plan file %s: its plan is for %s, not for the workload %s", path, pf.Model, m)
	case pf.Cluster != p.Name || pf.GPUs != p.GPUs():
		return PlanFile{}, fmt.Errorf("plan file %s: its plan is for %s (%d GPUs), not for the cluster %s (%d GPUs)", path, pf.Cluster, pf.GPUs, p.Name, p.GPUs())
	}
	return PlanFile{Strategy: pf.Strategy, For: f.For, Stack: pf.Stack, Step: pf.Step}, nil
}

// reason is err without the path a PathError repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ProfileMeta is the exporter's meta of an ops profile's graph g (nil
// when it holds none), path the profile's file.
func ProfileMeta(pr *profile.Profile, path string, g *graph.Graph) (*export.TorchMeta, error) {
	if pr.Ops == nil || len(pr.Ops.Meta) == 0 {
		return nil, nil
	}
	return export.DecodeTorchMeta("profile "+path+" ops.meta", pr.Ops.Meta, g)
}

// SideFiles are the files an export to format to (deepspeed, or
// deepspeed@VERSION) may write beside its output out: DeepSpeed's
// pipeline module and its MoE module; none for other formats.
func SideFiles(to, out string) []string {
	to = strings.ToLower(strings.TrimSpace(to))
	if to != "deepspeed" && !strings.HasPrefix(to, "deepspeed@") {
		return nil
	}
	return []string{export.DeepSpeedPipelinePath(out), planexport.DeepSpeedMoEPath(out)}
}
