package report

import "strings"

// ObjectiveValue formats a value of the objective spelled objective
// ("step-time" or "peak-memory", optimize.Objective's String; "" =
// step-time): seconds or bytes.
func ObjectiveValue(objective string, v float64) string {
	if objective == "peak-memory" {
		return Bytes(int64(v))
	}
	return Seconds(v)
}

// ObjectiveTitle is the objective's name in headers: "step time" or "peak
// memory" ("" = step time).
func ObjectiveTitle(objective string) string {
	if objective == "" {
		return "step time"
	}
	return strings.ReplaceAll(objective, "-", " ")
}
