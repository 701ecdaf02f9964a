package placements

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/report"
)

// OpCosts says where an op graph's figures come from when an ops profile
// priced it (eval and search --profile; docs/profile.md, Op graphs):
// each op is measured (its median time on the profile's device) or
// modelled (the roofline's, where the profile matched no event to it),
// and each figure says which it rests on.
type OpCosts struct {
	Profile   string `json:"profile"`   // the file
	Model     string `json:"model"`     // as placer profile --model named it
	Device    string `json:"device"`    // kind and name: cuda "NVIDIA H100 80GB HBM3"
	Software  string `json:"software"`  // torch, CUDA and driver versions
	Precision string `json:"precision"` // fp32, tf32, bf16
	Steps     int    `json:"steps"`     // the profiled steps the times are medians of
	Complete  bool   `json:"complete"`  // false: the profile run was interrupted
	// MeasuredOps and ModelledOps count one replica's ops that do work
	// (not the inputs, parameters and buffers); Measured and Modelled
	// are their seconds, each op alone and unfused.
	MeasuredOps int     `json:"measured_ops"`
	ModelledOps int     `json:"modelled_ops"`
	Measured    float64 `json:"measured_s"`
	Modelled    float64 `json:"modelled_s"`
	// StepTime is what the step time (and the busy time of each GPU in
	// PerDevice) rests on: "measured" (every op that does work measured),
	// "modelled" (none), or "measured and modelled".
	StepTime string `json:"step_time"`
	// Of names the figures' decision where there are several (search:
	// "the answer"; every row's ops are priced alike, its strategy may
	// scale them); "" for eval's one.
	Of        string       `json:"of,omitempty"`
	PerDevice []DeviceCost `json:"devices,omitempty"`
	// Batch and ScaledTo, where the decision's strategy splits the batch
	// (replicas, micro-batches): the profiled batch and the share one
	// micro-batch of a replica runs, each measured op's time scaled
	// linearly from the one to the other (graph.AtBatch): composed, not
	// measured. 0: not scaled.
	Batch    int `json:"batch,omitempty"`
	ScaledTo int `json:"scaled_to,omitempty"`
	// Transfers is "modelled" where the decision moves bytes between
	// GPUs (transfers, collectives: the roofline's links; the profile
	// ran on one device), "" where it moves none.
	Transfers string `json:"transfers,omitempty"`
}

// Moved notes that the decision moves bytes between GPUs: its transfers
// and collectives are the roofline's, and the step rests on them too.
func (c *OpCosts) Moved(bytes int64) {
	if c == nil || bytes <= 0 {
		return
	}
	c.Transfers = "modelled"
	if c.StepTime == "measured" || c.StepTime == "composed" {
		c.StepTime += " and modelled"
	}
}

// DeviceCost is one GPU's share of OpCosts: the seconds of its ops
// measured and modelled, and what its busy time rests on.
type DeviceCost struct {
	Measured float64 `json:"measured_s"`
	Modelled float64 `json:"modelled_s"`
	Busy     string  `json:"busy"`
}

// Source is what a figure made of measured seconds and modelled seconds
// rests on: measured, modelled, or both; composed in place of measured
// where the measured times were scaled to another batch (ScaledTo).
func (c *OpCosts) Source(measured, modelled float64) string {
	m := "measured"
	if c.ScaledTo > 0 {
		m = "composed"
	}
	switch {
	case modelled == 0 && measured > 0:
		return m
	case measured == 0:
		return "modelled"
	}
	return m + " and modelled"
}

// WriteOpCosts writes c's lines (none for nil).
func WriteOpCosts(w io.Writer, c *OpCosts) {
	if c == nil {
		return
	}
	state := ""
	if !c.Complete {
		state = ", interrupted"
	}
	fmt.Fprintf(w, "profile %s: %s, %s, on %s (%s), %d steps%s\n", c.Profile, c.Model, c.Precision, c.Device, c.Software, c.Steps, state)
	moved := ""
	if c.Transfers != "" {
		moved = "; transfers and collectives modelled (the roofline's links)"
	}
	scaled := ""
	if c.ScaledTo > 0 {
		scaled = fmt.Sprintf(" at batch %d, scaled to the %d a micro-batch runs (composed)", c.Batch, c.ScaledTo)
	}
	of := ""
	if c.Of != "" {
		of = " of " + c.Of
	}
	fmt.Fprintf(w, "step time%s %s: %d ops measured (%s%s), %d modelled by the roofline (%s)%s\n",
		of, c.StepTime, c.MeasuredOps, report.Seconds(c.Measured), scaled, c.ModelledOps, report.Seconds(c.Modelled), moved)
	if len(c.PerDevice) > 1 {
		parts := make([]string, len(c.PerDevice))
		for i, d := range c.PerDevice {
			parts[i] = fmt.Sprintf("GPU %d %s", i, d.Busy)
		}
		fmt.Fprintf(w, "busy time: %s\n", strings.Join(parts, ", "))
	}
}
