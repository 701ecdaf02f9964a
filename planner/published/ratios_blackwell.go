package published

import (
	"fmt"
	"strings"
)

// SweepRatio is a check of its own: the published throughput of one
// system over another's for the same model and release (tokens a second
// per GPU, each row as its sweep reads it), against the same ratio of
// placer's predictions of the two rows. The mark: within 10% of
// the published ratio.
type SweepRatio struct {
	Name     string
	Num, Den SweepRow
	// NumSet and DenSet are the rows' source sets (their sweeps').
	NumSet, DenSet string
}

// RatioTolerance is the share of a published ratio placer's must fall
// within.
const RatioTolerance = 0.10

// BlackwellRatios are the B200/H100 and GB200/B200 ratios of every model
// and release that Megatron-Bridge's archive publishes on both systems
// and placer reads (bridgeReleases, bridgeBlackwell): Llama 3 8B (25.09,
// 25.11: FP8-CS on Blackwell, FSDP FP8-CS on H100), GPT-OSS 120B (BF16,
// 26.02 to 26.04.01) and Qwen3-30B-A3B (26.02 to 26.04.01: MXFP8 on
// Blackwell, FP8-CS on 16 H100s), each row as its table publishes it
// (the systems' recipes differ: the ratio is of the rows, not of one
// plan). Llama 3 70B and 3.1 405B have no B200 row in these releases.
func BlackwellRatios() []SweepRatio {
	find := func(sweep, label string) (SweepRow, string) {
		for _, sw := range Sweeps() {
			if !strings.Contains(sw.Name, sweep) {
				continue
			}
			for _, r := range sw.Rows {
				if strings.HasPrefix(r.Label, label) {
					return r, sw.Set
				}
			}
		}
		panic(fmt.Sprintf("published: no row %q in a sweep %q", label, sweep)) // this file's own rows (TestBlackwellRatios)
	}
	var out []SweepRatio
	add := func(model, rel, sweep, num, den, numLabel, denLabel string) {
		n, ns := find("DGX-"+num+" by release: "+sweep, numLabel)
		d, ds := find("DGX-"+den+" by release: "+sweep, denLabel)
		out = append(out, SweepRatio{Name: fmt.Sprintf("%s %s, %s/%s", model, rel, num, den), Num: n, Den: d, NumSet: ns, DenSet: ds})
	}
	for _, rel := range []string{"25.09", "25.11"} {
		add("Llama 3 8B", rel, "Llama 3 8B", "B200", "H100", rel+" FP8-CS", rel+":")
		add("Llama 3 8B", rel, "Llama 3 8B", "GB200", "B200", rel+" FP8-CS", rel+" FP8-CS")
	}
	for _, rel := range []string{"26.02", "26.02.01", "26.04", "26.04.01"} {
		add("GPT-OSS 120B", rel, "GPT-OSS 120B", "B200", "H100", rel+" ", rel+":")
		add("GPT-OSS 120B", rel, "GPT-OSS 120B", "GB200", "B200", rel+" ", rel+" ")
		add("Qwen3-30B-A3B", rel, "Qwen3-30B-A3B", "B200", "H100", rel+" ", rel+":")
		add("Qwen3-30B-A3B", rel, "Qwen3-30B-A3B", "GB200", "B200", rel+" ", rel+" ")
	}
	return out
}
