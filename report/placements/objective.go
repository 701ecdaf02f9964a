package placements

import "github.com/placer/placer/report"

import "strings"

// ObjectiveValue formats a value of the objective spelled objective
// ("step-time" or "peak-memory", optimize.Objective's String; "" =
// step-time): seconds or bytes.
func ObjectiveValue(objective string, v float64) string {
	if objective == "peak-memory" {
		return report.Bytes(int64(v))
	}
	return report.Seconds(v)
}

// ObjectiveTitle is the objective's name in headers: "step time" or "peak
// memory" ("" = step time).
func ObjectiveTitle(objective string) string {
	if objective == "" {
		return "step time"
	}
	return strings.ReplaceAll(objective, "-", " ")
}
