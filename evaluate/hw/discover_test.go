package hw

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
)

func TestDiscoverNoDriver(t *testing.T) {
	f := &fakeNVML{initErr: errors.New("Driver Not Loaded")}
	inv, err := DiscoverWith(f)
	if inv != nil || !errors.Is(err, ErrNoDriver) {
		t.Fatalf("got %v, %v; want ErrNoDriver", inv, err)
	}
	var nd *NoDriverError
	if !errors.As(err, &nd) || nd.Reason != "Driver Not Loaded" {
		t.Fatalf("error %v is not a NoDriverError with NVML's reason", err)
	}
	if len(f.calledBeforeInit) > 0 {
		t.Fatalf("NVML called without a successful Init: %v", f.calledBeforeInit)
	}
}

func TestInfoNoDriverOneLine(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		f := &fakeNVML{initErr: errors.New("libnvidia-ml.so.1 not found")}
		var out, errw bytes.Buffer
		if err := InfoWith(f, &out, &errw, InfoOptions{JSON: asJSON}); err != nil {
			t.Fatalf("json=%v: %v", asJSON, err)
		}
		if strings.Count(out.String(), "\n") != 1 || errw.Len() != 0 {
			t.Fatalf("json=%v: want exactly one line on stdout and nothing on stderr, got %q / %q", asJSON, out.String(), errw.String())
		}
		if len(f.calledBeforeInit) > 0 {
			t.Fatalf("NVML called without a successful Init: %v", f.calledBeforeInit)
		}
		if !asJSON {
			want := "no NVIDIA driver found (libnvidia-ml.so.1 not found); hardware presets: " + strings.Join(roofline.Presets(), ", ") + "\n"
			if out.String() != want {
				t.Fatalf("got %q, want %q", out.String(), want)
			}
			continue
		}
		var obj struct {
			Driver  bool
			Reason  string
			GPUs    []GPU
			Presets []string
		}
		if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Driver || obj.GPUs == nil || len(obj.GPUs) != 0 || len(obj.Presets) != len(roofline.Presets()) || obj.Reason == "" {
			t.Fatalf("bad no-driver JSON: %s", out.String())
		}
	}
}

func TestInfoNoGPUs(t *testing.T) {
	f := newFake("x", 0)
	var out, errw bytes.Buffer
	if err := InfoWith(f, &out, &errw, InfoOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "no NVIDIA GPU found (driver 550.54.15); hardware presets: ") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("got %q", out.String())
	}
	if !f.shutdown {
		t.Fatal("NVML not shut down")
	}
}

// dgx1 is a 4-GPU slice of a DGX-1V hybrid cube-mesh: 0-1 and 2-3 with
// two NVLinks, 0-2 and 1-3 with one, 0-3 and 1-2 over PCIe.
func dgx1() *fakeNVML {
	f := newFake("Tesla V100-SXM2-32GB", 4)
	link := func(a, b, n int) {
		for k := 0; k < n; k++ {
			da, db := f.devs[a], f.devs[b]
			if da.links == nil {
				da.links = map[int]string{}
			}
			if db.links == nil {
				db.links = map[int]string{}
			}
			// Remote bus ids in NVML's legacy short form, lower case: they
			// must still match.
			da.links[len(da.links)] = strings.ToLower(strings.TrimPrefix(fakeBus(b), "0000"))
			db.links[len(db.links)] = strings.ToLower(strings.TrimPrefix(fakeBus(a), "0000"))
		}
	}
	link(0, 1, 2)
	link(2, 3, 2)
	link(0, 2, 1)
	link(1, 3, 1)
	f.ancestor[[2]int{0, 1}] = TopologySingle
	f.ancestor[[2]int{2, 3}] = TopologySingle
	f.ancestor[[2]int{0, 3}] = TopologyNode
	f.ancestor[[2]int{1, 2}] = TopologySystem
	return f
}

func TestDiscoverTopologyDirectNVLink(t *testing.T) {
	f := dgx1()
	inv, err := DiscoverWith(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calledBeforeInit) > 0 || !f.shutdown {
		t.Fatalf("init/shutdown discipline broken: %v shutdown=%v", f.calledBeforeInit, f.shutdown)
	}
	want := [][]string{
		{"X", "NV2", "NV1", "NODE"},
		{"NV2", "X", "SYS", "NV1"},
		{"NV1", "SYS", "X", "NV2"},
		{"NODE", "NV1", "NV2", "X"},
	}
	for i := range want {
		for j := range want[i] {
			if got := inv.Topology[i][j].Kind; got != want[i][j] {
				t.Errorf("topology[%d][%d] = %q, want %q", i, j, got, want[i][j])
			}
		}
	}
	if l := inv.Topology[0][1]; l.NVLinks != 2 || l.ViaSwitch || l.PCIe != "PIX" {
		t.Errorf("0->1 = %+v", l)
	}
	if g := inv.GPUs[0]; len(g.NVLinks) != 3 || g.NVLinks[0].RemoteGPU != 1 || g.NVLinks[2].RemoteGPU != 2 {
		t.Errorf("GPU0 links = %+v", g.NVLinks)
	}
	if inv.CUDAVersion != "12.4" || inv.DriverVersion != "550.54.15" || inv.GPUs[3].ComputeCapability != "9.0" {
		t.Errorf("versions: %+v", inv)
	}
	if len(inv.Warnings) != 0 {
		t.Errorf("unexpected warnings %v", inv.Warnings)
	}
}

func TestDiscoverTopologyNVSwitch(t *testing.T) {
	f := newFake("NVIDIA H100 80GB HBM3", 3)
	for i, d := range f.devs {
		d.links = map[int]string{}
		for l := 0; l < 18; l++ {
			d.links[l] = "00000000:C" + string(rune('0'+l%4)) + ":00.0" // four NVSwitches
		}
		if i == 2 {
			delete(d.links, 17) // one link down
		}
	}
	f.p2p[[2]int{0, 1}] = true
	f.p2p[[2]int{0, 2}] = true
	// GPU 1-2: P2P over NVLink disabled (e.g. by the fabric manager).
	inv, err := DiscoverWith(f)
	if err != nil {
		t.Fatal(err)
	}
	if l := inv.Topology[0][1]; l.Kind != "NV18" || !l.ViaSwitch {
		t.Errorf("0-1 = %+v", l)
	}
	if l := inv.Topology[2][0]; l.Kind != "NV17" {
		t.Errorf("2-0 = %+v, want NV17 (the smaller link count)", l)
	}
	if l := inv.Topology[1][2]; l.Kind != "SYS" || l.NVLinks != 0 {
		t.Errorf("1-2 = %+v, want PCIe SYS", l)
	}
	if inv.GPUs[0].NVLinks[0].RemoteGPU != -1 {
		t.Errorf("switch link should have RemoteGPU -1: %+v", inv.GPUs[0].NVLinks[0])
	}
}

func TestInfoTableAndJSON(t *testing.T) {
	f := dgx1()
	f.devs[3].failName = true
	var out, errw bytes.Buffer
	if err := InfoWith(f, &out, &errw, InfoOptions{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"3 x Tesla V100-SXM2-32GB", "driver 550.54.15", "CUDA 12.4", "80.0 / 79.0", "1410 / 1980", "gen4 x16 / gen5 x16", "00000000:0F:00.0", "Topology:", "NV2", "NODE", "SYS", TopologyLegend} {
		if !strings.Contains(s, want) {
			t.Errorf("table output lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(errw.String(), "warning: GPU 3 name: GPU is lost") {
		t.Errorf("stderr = %q, want the name warning", errw.String())
	}

	out.Reset()
	errw.Reset()
	if err := InfoWith(dgx1(), &out, &errw, InfoOptions{JSON: true}); err != nil {
		t.Fatal(err)
	}
	var inv Inventory
	if err := json.Unmarshal(out.Bytes(), &inv); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(inv.GPUs) != 4 || inv.Topology[1][3].Kind != "NV1" || inv.GPUs[1].MemoryTotal != 80<<30 || errw.Len() != 0 {
		t.Fatalf("JSON round trip: %+v", inv)
	}
	if bw := inv.GPUs[0].TheoreticalMemBandwidth(); bw < 3.34e12 || bw > 3.36e12 {
		t.Errorf("theoretical bandwidth %g, want 3.35e12 (2619 MHz x 5120 bit)", bw)
	}
}

func TestSingleGPUNoMatrix(t *testing.T) {
	var out, errw bytes.Buffer
	if err := InfoWith(newFake("NVIDIA A100-SXM4-80GB", 1), &out, &errw, InfoOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Topology") || !strings.Contains(out.String(), "NVIDIA A100-SXM4-80GB") {
		t.Fatalf("got:\n%s", out.String())
	}
}

// TestSystemNVML runs the real go-nvml path: on a machine without a driver
// it must fail cleanly with ErrNoDriver (not crash on a missing symbol);
// on a GPU host it must find at least one GPU.
func TestSystemNVML(t *testing.T) {
	inv, err := Discover()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) {
			t.Fatalf("Discover: %v, want ErrNoDriver", err)
		}
		t.Logf("no driver: %v", err)
		var out, errw bytes.Buffer
		if err := Info(&out, &errw, InfoOptions{}); err != nil || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("Info without driver: %v, %q", err, out.String())
		}
		return
	}
	t.Logf("%s", inv.Summary())
	for _, g := range inv.GPUs {
		if g.MemoryTotal <= 0 {
			t.Errorf("GPU %d: no memory total", g.Index)
		}
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:07:00.0":     "00000000:07:00.0",
		"0000:07:00.0":         "00000000:07:00.0",
		"0000:c1:00.0\x00\x00": "00000000:C1:00.0",
		"07:00.0":              "00000000:07:00.0",
		"garbage":              "GARBAGE",
		"":                     "",
	} {
		if got := NormalizeBusID(in); got != want {
			t.Errorf("NormalizeBusID(%q) = %q, want %q", in, got, want)
		}
	}
	if CUDAVersionString(12040) != "12.4" || CUDAVersionString(11080) != "11.8" || CUDAVersionString(0) != "" {
		t.Error("CUDAVersionString")
	}
}
