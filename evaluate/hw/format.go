package hw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/placer/placer/evaluate/roofline"
)

// InfoOptions are the options of `placer hw`.
type InfoOptions struct {
	JSON bool // one JSON object instead of tables
}

// Info discovers this machine's GPUs and writes them to out: a table with
// a row per GPU and the topology matrix, or (o.JSON) the Inventory as one
// JSON object. Warnings (NVML queries that failed) go to errw in table
// mode and into the object in JSON mode. Without a driver or GPU it
// writes a single line (NoDriverLine; a one-line JSON object with
// o.JSON) and returns nil: having no GPU is not an error for this command.
func Info(out, errw io.Writer, o InfoOptions) error { return InfoWith(SystemNVML(), out, errw, o) }

// InfoWith is Info over the given NVML (a fake in tests).
func InfoWith(lib NVML, out, errw io.Writer, o InfoOptions) error {
	inv, err := DiscoverWith(lib)
	if err != nil {
		var nd *NoDriverError
		if !errors.As(err, &nd) {
			return err
		}
		return writeNoGPU(out, o, nd.Reason, "")
	}
	if len(inv.GPUs) == 0 {
		return writeNoGPU(out, o, "", inv.DriverVersion)
	}
	if o.JSON {
		return WriteInventoryJSON(out, inv)
	}
	if err := WriteInventoryTable(out, inv); err != nil {
		return err
	}
	for _, w := range inv.Warnings {
		fmt.Fprintf(errw, "warning: %s\n", w)
	}
	return nil
}

// NoDriverLine is the line `placer hw` prints on a machine without an
// NVIDIA driver (reason, if any, is NVML's explanation), or without GPUs
// (driver names the driver's version).
func NoDriverLine(reason, driver string) string {
	presets := strings.Join(roofline.Presets(), ", ")
	switch {
	case driver != "":
		return fmt.Sprintf("no NVIDIA GPU found (driver %s); hardware presets: %s", driver, presets)
	case reason != "":
		return fmt.Sprintf("no NVIDIA driver found (%s); hardware presets: %s", reason, presets)
	}
	return "no NVIDIA driver found; hardware presets: " + presets
}

func writeNoGPU(out io.Writer, o InfoOptions, reason, driver string) error {
	if !o.JSON {
		_, err := fmt.Fprintln(out, NoDriverLine(reason, driver))
		return err
	}
	obj := struct {
		Driver        bool     `json:"driver"`
		DriverVersion string   `json:"driver_version,omitempty"`
		Reason        string   `json:"reason,omitempty"`
		GPUs          []GPU    `json:"gpus"`
		Presets       []string `json:"presets"`
	}{Driver: driver != "", DriverVersion: driver, Reason: reason, GPUs: []GPU{}, Presets: roofline.Presets()}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// WriteInventoryJSON writes inv as one indented JSON object.
func WriteInventoryJSON(w io.Writer, inv *Inventory) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(inv)
}

// WriteInventoryTable writes a summary line, a table with one row per GPU
// and, with more than one GPU, the topology matrix and its legend.
func WriteInventoryTable(w io.Writer, inv *Inventory) error {
	fmt.Fprintf(w, "%s (NVML %s)\n", inv.Summary(), orDash(inv.NVMLVersion))
	rows := make([][]string, len(inv.GPUs))
	for i, g := range inv.GPUs {
		rows[i] = []string{
			fmt.Sprint(g.Index), orDash(g.Name),
			fmt.Sprintf("%s / %s", gib(g.MemoryTotal), gib(g.MemoryFree)),
			fmt.Sprintf("%s / %s", mhz(g.SMClock), mhz(g.SMClockMax)),
			fmt.Sprintf("%s / %s", mhz(g.MemoryClock), mhz(g.MemoryClockMax)),
			orDash(g.ComputeCapability),
			fmt.Sprintf("%s / %s", pcie(g.PCIeGen, g.PCIeWidth), pcie(g.PCIeGenMax, g.PCIeWidthMax)),
			fmt.Sprint(len(g.NVLinks)),
			orDash(g.PCIBusID),
		}
	}
	if err := renderTable(w, []string{"GPU", "Name", "Memory GiB (total / free)", "SM MHz (cur / max)", "Mem MHz (cur / max)", "CC", "PCIe (cur / max)", "NVLinks", "Bus ID"}, rows); err != nil {
		return err
	}
	if len(inv.GPUs) < 2 {
		return nil
	}
	fmt.Fprintln(w, "Topology:")
	if err := renderTable(w, topologyHeader(len(inv.GPUs)), TopologyRows(inv)); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, TopologyLegend)
	return err
}

// TopologyLegend explains the labels of the topology matrix.
const TopologyLegend = "X = self; NV# = # NVLinks (direct or through NVSwitch); PIX = one PCIe switch; PXB = several PCIe switches; PHB = a PCIe host bridge; NODE = host bridges of one NUMA node; SYS = across NUMA nodes; BRD = same board"

func topologyHeader(n int) []string {
	h := make([]string, n+1)
	for j := 0; j < n; j++ {
		h[j+1] = fmt.Sprintf("GPU%d", j)
	}
	return h
}

// TopologyRows is the topology matrix as table rows: the row label
// ("GPU0") and then one Link.Kind per column.
func TopologyRows(inv *Inventory) [][]string {
	rows := make([][]string, len(inv.Topology))
	for i, r := range inv.Topology {
		rows[i] = make([]string, len(r)+1)
		rows[i][0] = fmt.Sprintf("GPU%d", i)
		for j, l := range r {
			rows[i][j+1] = l.Kind
		}
	}
	return rows
}

func renderTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header(header)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

func gib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(b)/(1<<30))
}

func mhz(v int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

func pcie(gen, width int) string {
	if gen <= 0 {
		return "-"
	}
	return fmt.Sprintf("gen%d x%d", gen, width)
}
