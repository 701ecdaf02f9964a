package sizing

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/report/plans"
)

func TestParseTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"15T", 15e12, false}, {"800B", 800e9, false}, {"2.5M", 2.5e6, false}, {"1.2e12", 1.2e12, false},
		{"7k", 7000, false}, {"0", 0, true}, {"-3T", 0, true}, {"T", 0, true}, {"lots", 0, true},
	} {
		got, err := ParseTokens(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseTokens(%q) = %g, %v; want %g, bad %v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"54d", 54 * 86400, false}, {"1.5d", 1.5 * 86400, false}, {"720h", 720 * 3600, false},
		{"90m", 5400, false}, {"5", 0, true}, {"0d", 0, true}, {"-2h", 0, true}, {"soon", 0, true},
	} {
		got, err := ParseDuration(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseDuration(%q) = %g, %v; want %g, bad %v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestCandidates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"dgx-h100:64", []string{"dgx-h100:64"}},
		{"dgx-h100:16..100", []string{"dgx-h100:16", "dgx-h100:32", "dgx-h100:64", "dgx-h100:100"}},
		{"dgx-h100:4..4", []string{"dgx-h100:4"}},
		{"dgx-b200:8,12;dgx-h100:2", []string{"dgx-b200:8", "dgx-b200:12", "dgx-h100:2"}},
		{"dgx-h100:64,nics=4 dgx-a100:1", []string{"dgx-h100:64,nics=4", "dgx-a100:1"}},
	} {
		got, err := Candidates(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Candidates(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	all, err := Candidates("all:2")
	if err != nil || len(all) < 10 || !slices.Contains(all, "dgx-h100:2") || !slices.Contains(all, "gb200-nvl72:2") {
		t.Errorf("Candidates(all:2) = %v, %v: want every preset at 2 nodes", all, err)
	}
	for _, bad := range []string{"", "dgx-h100", "dgx-h100:0", "dgx-h100:8..4", "nosuch:4", "dgx-h100:x", "dgx-h100:nics=4"} {
		if got, err := Candidates(bad); err == nil {
			t.Errorf("Candidates(%q) = %v, want an error", bad, got)
		}
	}
}

func TestPhaseWorkload(t *testing.T) {
	ph := plans.SizePhase{Seq: 8192, Batch: 2048, Tokens: 1e12}
	for _, c := range []struct{ in, want string }{
		{"llama3-8b", "llama3-8b:seq=8192,batch=2048"},
		{"llama3-8b:seq=4096,batch=512", "llama3-8b:seq=8192,batch=2048"},
		{"gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8", "gpt:layers=2,hidden=64,heads=4,vocab=100,seq=8192,batch=2048"},
		{"hf:/m/config.json", "hf:/m/config.json:seq=8192,batch=2048"},
	} {
		if got := phaseWorkload(c.in, ph); got != c.want {
			t.Errorf("phaseWorkload(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := phaseWorkload("llama3-8b:seq=1,batch=2", plans.SizePhase{Tokens: 5}); got != "llama3-8b:seq=1,batch=2" {
		t.Errorf("a phase without seq changed the workload: %q", got)
	}
}

func TestPhases(t *testing.T) {
	got, err := Options{Phases: "seq=4096,batch=1024,tokens=252M; seq=8192,batch=2048,tokens=15T"}.phases()
	want := []plans.SizePhase{{Seq: 4096, Batch: 1024, Tokens: 252e6}, {Seq: 8192, Batch: 2048, Tokens: 15e12}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("phases = %v, %v; want %v", got, err, want)
	}
	for _, o := range []Options{{}, {Tokens: 1, Phases: "seq=1,batch=1,tokens=1"}, {Phases: "seq=1,batch=1"}, {Phases: "seq=1,batch=1,tokens=1,mbs=2"}, {Phases: "seq=0,batch=1,tokens=1"}} {
		if _, err := o.phases(); err == nil {
			t.Errorf("phases of %+v: want an error", o)
		}
	}
}

func TestReadPrices(t *testing.T) {
	head := "preset,provider,offer,usd_per_gpu_hour,source,date\n"
	rows, err := ReadPrices(strings.NewReader(head+"# a comment\ndgx-h100,A,x,2.5,https://a,2026-01-02\ndgx-h100,B,y,2.0,https://b,2026-01-03\n"), "t.csv")
	if err != nil || len(rows) != 2 || rows[1].PerHour != 2.0 || rows[0].Source != "https://a" {
		t.Fatalf("ReadPrices = %v, %v", rows, err)
	}
	if p := PriceOf(rows, "dgx-h100", ""); p == nil || p.Provider != "B" {
		t.Errorf("PriceOf cheapest = %v, want B's row", p)
	}
	if p := PriceOf(rows, "dgx-h100", "a"); p == nil || p.Provider != "A" {
		t.Errorf("PriceOf provider a = %v, want A's row", p)
	}
	if p := PriceOf(rows, "dgx-b200", ""); p != nil {
		t.Errorf("PriceOf an unpriced preset = %v, want nil", p)
	}
	for name, text := range map[string]string{
		"header":    "preset,price\n",
		"no source": head + "dgx-h100,A,x,2.5,,2026-01-02\n",
		"no date":   head + "dgx-h100,A,x,2.5,https://a,\n",
		"bad date":  head + "dgx-h100,A,x,2.5,https://a,Jan 2026\n",
		"price 0":   head + "dgx-h100,A,x,0,https://a,2026-01-02\n",
		"preset":    head + "h100,A,x,2,https://a,2026-01-02\n",
		"fields":    head + "dgx-h100,A,2,https://a,2026-01-02\n",
		"empty":     head,
	} {
		if _, err := ReadPrices(strings.NewReader(text), "t.csv"); err == nil || !strings.Contains(err.Error(), "t.csv") {
			t.Errorf("%s: ReadPrices err = %v, want one naming the file", name, err)
		}
	}
}

// TestDefaultPrices: the committed table reads, and every row has a
// source and a date (ReadPrices refuses a row without).
func TestDefaultPrices(t *testing.T) {
	rows, err := ReadPrices(bytes.NewReader(DefaultPrices), "prices.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Source, "https://") {
			t.Errorf("%s %s: source %q is no address", r.Preset, r.Provider, r.Source)
		}
	}
}

func TestMarkParetoAndChoose(t *testing.T) {
	cand := func(name string, days, cost float64, late bool) plans.SizeCandidate {
		c := plans.SizeCandidate{Cluster: name, Time: plans.Band{Value: days * 86400}, Late: late, Runs: []plans.SizeRun{{}}}
		if cost > 0 {
			c.Cost = &plans.Band{Value: cost}
		}
		return c
	}
	cs := []plans.SizeCandidate{
		cand("a", 100, 10, true),    // cheapest, late
		cand("b", 50, 12, false),    // on the front
		cand("c", 60, 13, false),    // dominated by b
		cand("d", 20, 30, false),    // fastest
		cand("e", 30, 0, false),     // no price: not on the front
		{Cluster: "f", NoPlan: "x"}, // no plan
	}
	plans.MarkPareto(cs)
	var front []string
	for _, c := range cs {
		if c.Pareto {
			front = append(front, c.Cluster)
		}
	}
	if !slices.Equal(front, []string{"a", "b", "d"}) {
		t.Errorf("Pareto front = %v, want [a b d]", front)
	}
	if i, _ := choose(cs, ChooseCheapest); cs[i].Cluster != "b" {
		t.Errorf("cheapest meeting the deadline = %s, want b", cs[i].Cluster)
	}
	if i, _ := choose(cs, ChooseFastest); cs[i].Cluster != "d" {
		t.Errorf("fastest = %s, want d", cs[i].Cluster)
	}
	if i, why := choose(cs[:1], ChooseCheapest); i != -1 || why == "" {
		t.Errorf("choose of one late candidate = %d %q, want -1 and why", i, why)
	}
}

// TestRunSmall sizes a small GPT on one and two DGX H100 nodes: the
// time is the steps over the goodput, the GPU-hours, energy and cost
// follow from it, the band is the stated error's.
func TestRunSmall(t *testing.T) {
	o := Options{Workload: "gpt:layers=4,hidden=1024,heads=16,seq=2048,vocab=32000,batch=64", Tokens: 1e9,
		Clusters: "dgx-h100:1..2", Goodput: 0.8}
	s, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Candidates) != 2 || s.Goodput.Value != 0.8 || s.Tokens != 1e9 {
		t.Fatalf("answer %+v", s)
	}
	for _, c := range s.Candidates {
		if !c.Fits() {
			t.Fatalf("%s: no plan: %s", c.Cluster, c.NoPlan)
		}
		r := c.Runs[0]
		steps := 1e9 / (2048 * 64)
		if math.Abs(r.Steps-steps) > 1e-9 {
			t.Errorf("%s: %g steps, want %g", c.Cluster, r.Steps, steps)
		}
		time := steps * r.Step / 0.8
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s: %s = %g, want %g", c.Cluster, what, got, want)
			}
		}
		near("time", c.Time.Value, time)
		near("GPU-hours", c.GPUHours.Value, time*float64(c.GPUs)/3600)
		near("energy", c.EnergyMWh.Value, time*float64(c.GPUs)/3600*700/1e6)
		near("cost", c.Cost.Value, time*float64(c.GPUs)/3600*c.Price.PerHour)
		near("tokens/s", c.TokensPerSec.Value, 1e9/(steps*r.Step))
		if c.Error > 0 {
			near("time's high", c.Time.High, time*(1+c.Error))
			near("time's low", c.Time.Low, time*(1-c.Error))
			near("tokens/s high", c.TokensPerSec.High, 1e9/(steps*r.Step*(1-c.Error)))
		}
	}
	if s.Chosen < 0 || !s.Candidates[s.Chosen].Fits() {
		t.Errorf("chosen %d", s.Chosen)
	}
}

func TestRunRefuses(t *testing.T) {
	base := Options{Workload: "llama3-8b:seq=4096,batch=64", Tokens: 1e9, Clusters: "dgx-h100:1"}
	for name, o := range map[string]Options{
		"no tokens":  {Workload: base.Workload, Clusters: base.Clusters},
		"workload":   {Workload: "nosuch:seq=1,batch=1", Tokens: 1, Clusters: base.Clusters},
		"goodput":    {Workload: base.Workload, Tokens: 1, Clusters: base.Clusters, Goodput: 1.5},
		"choose":     {Workload: base.Workload, Tokens: 1, Clusters: base.Clusters, Choose: "best"},
		"clusters":   {Workload: base.Workload, Tokens: 1, Clusters: "dgx-h100"},
		"price file": {Workload: base.Workload, Tokens: 1, Clusters: base.Clusters, Prices: "/nonexistent/p.csv"},
	} {
		if _, err := Run(context.Background(), o); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line", name, err)
		}
	}
}
