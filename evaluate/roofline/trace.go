package roofline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// Timeline records a simulation for a trace; it implements Recorder.
type Timeline struct {
	Kernels   []KernelSpan
	Transfers []TransferSpan
	Mem       []MemSample
}

// KernelSpan is one kernel: the ops it ran (several when fused).
type KernelSpan struct {
	Device     int
	Ops        []int32
	Start, End float64
}

// TransferSpan is one tensor transfer.
type TransferSpan struct {
	Channel, Src, Dst, Tensor int
	Bytes                     int64
	Start, End                float64
}

// MemSample says that device Device holds Bytes from time T on.
type MemSample struct {
	Device int
	T      float64
	Bytes  int64
}

// Kernel implements Recorder.
func (tl *Timeline) Kernel(dev int, ops []int32, start, end float64) {
	tl.Kernels = append(tl.Kernels, KernelSpan{Device: dev, Ops: append([]int32(nil), ops...), Start: start, End: end})
}

// Transfer implements Recorder.
func (tl *Timeline) Transfer(ch, src, dst, tensor int, bytes int64, start, end float64) {
	tl.Transfers = append(tl.Transfers, TransferSpan{Channel: ch, Src: src, Dst: dst, Tensor: tensor, Bytes: bytes, Start: start, End: end})
}

// Memory implements Recorder.
func (tl *Timeline) Memory(dev int, t float64, bytes int64) {
	tl.Mem = append(tl.Mem, MemSample{Device: dev, T: t, Bytes: bytes})
}

// Simulate runs one decision with a recording simulator and returns the
// result together with its timeline.
func Simulate(m *Model, d decision.Decision) (evaluate.Result, *Timeline, error) {
	tl := &Timeline{}
	s := NewSimulator(m, tl)
	r, err := s.Run(d)
	if err != nil {
		return evaluate.Result{}, nil, err
	}
	return r.Clone(), tl, nil
}

type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	ID   int            `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// round3 rounds x to three decimals (nanoseconds for times in
// microseconds, KiB for MiB), so that a trace carries no float noise
// (5.000000000000001) and the same run gives the same bytes.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// WriteTrace writes tl as Chrome trace-event JSON (opens in Perfetto and
// chrome://tracing): one track per device with its kernels, one track per
// link channel with its transfers, and a memory counter per device.
// Times are in microseconds.
func WriteTrace(w io.Writer, m *Model, tl *Timeline) error {
	return WriteTraceWith(w, m, tl, "", nil)
}

// Span is one extra span of a trace, on a named track of its own process
// (for example a measured run beside the model's timeline). Times are in
// seconds.
type Span struct {
	Track, Name string
	Start, End  float64
}

// WriteTraceWith is WriteTrace with the devices' process named title
// ("" = the cluster and graph) and extra spans in a third process, one
// track per distinct Track in order of first appearance.
func WriteTraceWith(w io.Writer, m *Model, tl *Timeline, title string, extra []Span) error {
	const devPID, linkPID, extraPID = 1, 2, 3
	var ev []traceEvent
	flowID := 0
	meta := func(pid, tid int, kind, name string) {
		ev = append(ev, traceEvent{Name: kind, Ph: "M", PID: pid, TID: tid, Args: map[string]any{"name": name}})
	}
	if title == "" {
		title = fmt.Sprintf("%s x%d (%s)", m.Cluster.Hardware.Name, m.d, m.G.Name())
	}
	meta(devPID, 0, "process_name", title)
	meta(linkPID, 0, "process_name", "links ("+m.Cluster.Topology+")")
	for k := 0; k < m.d; k++ {
		meta(devPID, k, "thread_name", fmt.Sprintf("GPU %d", k))
	}
	chans, channelName := linkChannels(m)
	for _, ch := range chans {
		meta(linkPID, ch, "thread_name", channelName[ch])
	}
	g := m.G
	kernelOf := make([]int32, g.NumOps()) // op -> index+1 of the kernel that ran it
	for i, k := range tl.Kernels {
		for _, o := range k.Ops {
			kernelOf[o] = int32(i + 1)
		}
	}
	for _, k := range tl.Kernels {
		dur := micros(k.End - k.Start)
		name := g.Op(int(k.Ops[0])).Name
		args := map[string]any{"type": g.Op(int(k.Ops[0])).Type, "class": g.Op(int(k.Ops[0])).Class.String()}
		if len(k.Ops) > 1 {
			name = fmt.Sprintf("fusion(%d): %s", len(k.Ops), name)
			names := make([]string, len(k.Ops))
			for i, o := range k.Ops {
				names[i] = g.Op(int(o)).Name
			}
			args["ops"] = strings.Join(names, ", ")
		}
		ev = append(ev, traceEvent{Name: name, Cat: "kernel", Ph: "X", TS: micros(k.Start), Dur: &dur, PID: devPID, TID: k.Device, Args: args})
	}
	for _, x := range tl.Transfers {
		dur := micros(x.End - x.Start)
		t := g.Tensor(x.Tensor)
		name := g.Op(t.Producer).Name
		if t.Name != "" {
			name = t.Name
		}
		ev = append(ev, traceEvent{Name: name, Cat: "transfer", Ph: "X", TS: micros(x.Start), Dur: &dur, PID: linkPID, TID: x.Channel,
			Args: map[string]any{"bytes": x.Bytes, "from": x.Src, "to": x.Dst}})
		// Flow arrows: the producer's kernel to the transfer, the transfer
		// to each consumer's kernel on the receiving GPU.
		flow := func(fromPID, fromTID int, fromTS float64, toPID, toTID int, toTS float64) {
			flowID++
			ev = append(ev,
				traceEvent{Name: "tensor", Cat: "flow", Ph: "s", TS: fromTS, PID: fromPID, TID: fromTID, ID: flowID},
				traceEvent{Name: "tensor", Cat: "flow", Ph: "f", BP: "e", TS: toTS, PID: toPID, TID: toTID, ID: flowID})
		}
		if k := kernelOf[t.Producer]; k > 0 {
			pk := tl.Kernels[k-1]
			flow(devPID, pk.Device, micros(pk.Start), linkPID, x.Channel, micros(x.Start))
		}
		for _, c := range t.Consumers {
			if k := kernelOf[c]; k > 0 && tl.Kernels[k-1].Device == x.Dst {
				ck := tl.Kernels[k-1]
				flow(linkPID, x.Channel, micros(x.Start), devPID, ck.Device, micros(ck.Start))
			}
		}
	}
	ev = append(ev, memoryCounters(tl.Mem, devPID)...)
	if len(extra) > 0 {
		meta(extraPID, 0, "process_name", "measured")
		tracks := map[string]int{}
		for _, x := range extra {
			tid, ok := tracks[x.Track]
			if !ok {
				tid = len(tracks)
				tracks[x.Track] = tid
				meta(extraPID, tid, "thread_name", x.Track)
			}
			dur := micros(x.End - x.Start)
			ev = append(ev, traceEvent{Name: x.Name, Cat: "measured", Ph: "X", TS: micros(x.Start), Dur: &dur, PID: extraPID, TID: tid})
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": ev, "displayTimeUnit": "ms"})
}

// linkChannels are the cluster's link channels, ascending, each named for
// the trace: a hybrid cube-mesh's NVLink by its two GPUs, any other by its
// sending GPU and link kind.
func linkChannels(m *Model) (chans []int, name map[int]string) {
	name = map[int]string{}
	for s := 0; s < m.d; s++ {
		for d := 0; d < m.d; d++ {
			if s == d {
				continue
			}
			ch := int(m.Cluster.Channel[s*m.d+d])
			if _, ok := name[ch]; !ok {
				if m.Cluster.Topology == "hybrid-cube-mesh" && m.Cluster.LinkKind[s*m.d+d] != fmt.Sprintf("pcie%d", m.Cluster.Hardware.PCIeGen) {
					name[ch] = fmt.Sprintf("GPU %d -> GPU %d (%s)", s, d, m.Cluster.LinkKind[s*m.d+d])
				} else {
					name[ch] = fmt.Sprintf("GPU %d out (%s)", s, m.Cluster.LinkKind[s*m.d+d])
				}
			}
		}
	}
	chans = make([]int, 0, len(name))
	for ch := range name {
		chans = append(chans, ch)
	}
	sort.Ints(chans) // map order would make the same run give different bytes
	return chans, name
}

// memoryCounters are the trace's memory counter events of samples mem
// (process pid): one sample per device and time (the last one the
// simulator recorded there), and none that repeats the value before.
func memoryCounters(mem []MemSample, pid int) []traceEvent {
	var ev []traceEvent
	type memKey struct {
		dev int
		t   float64
	}
	lastAt := map[memKey]int{}
	for i, s := range mem {
		lastAt[memKey{s.Device, micros(s.T)}] = i
	}
	prev := map[int]int64{}
	for i, s := range mem {
		if lastAt[memKey{s.Device, micros(s.T)}] != i {
			continue
		}
		if b, ok := prev[s.Device]; ok && b == s.Bytes {
			continue
		}
		prev[s.Device] = s.Bytes
		ev = append(ev, traceEvent{Name: fmt.Sprintf("memory GPU %d", s.Device), Ph: "C", TS: micros(s.T), PID: pid, TID: s.Device,
			Args: map[string]any{"MiB": round3(float64(s.Bytes) / (1 << 20))}})
	}
	return ev
}

// micros is s seconds in microseconds, to the nanosecond.
func micros(s float64) float64 { return round3(s * 1e6) }

// Schedule simulates d with a recording simulator and returns the result
// with its timeline as an evaluate.Schedule: the roofline model as an
// evaluate.Scheduler.
func (m *Model) Schedule(ctx context.Context, d decision.Decision) (evaluate.Result, evaluate.Schedule, error) {
	if err := ctx.Err(); err != nil {
		return evaluate.Result{}, evaluate.Schedule{}, err
	}
	r, tl, err := Simulate(m, d)
	if err != nil {
		return evaluate.Result{}, evaluate.Schedule{}, err
	}
	return r, tl.Schedule(), nil
}

// Schedule implements evaluate.Scheduler with the evaluator's model.
func (e *Evaluator) Schedule(ctx context.Context, d decision.Decision) (evaluate.Result, evaluate.Schedule, error) {
	return e.Model.Schedule(ctx, d)
}

// Schedule returns the timeline's kernels and transfers as an
// evaluate.Schedule (sharing the kernels' op slices).
func (tl *Timeline) Schedule() evaluate.Schedule {
	s := evaluate.Schedule{Kernels: make([]evaluate.Kernel, len(tl.Kernels)), Transfers: make([]evaluate.Transfer, len(tl.Transfers))}
	for i, k := range tl.Kernels {
		s.Kernels[i] = evaluate.Kernel{Device: k.Device, Ops: k.Ops, Start: k.Start, End: k.End}
	}
	for i, t := range tl.Transfers {
		s.Transfers[i] = evaluate.Transfer{Tensor: t.Tensor, Src: t.Src, Dst: t.Dst, Bytes: t.Bytes, Start: t.Start, End: t.End}
	}
	return s
}

var (
	_ evaluate.Scheduler = (*Model)(nil)
	_ evaluate.Scheduler = (*Evaluator)(nil)
)
