package decision

import (
	"strings"
	"testing"
)

// TestDecodeProfile: a profile (placer profile's, either kind) given as a
// decision is told as a profile, with the flag that takes it, not as an
// unknown field.
func TestDecodeProfile(t *testing.T) {
	for kind, want := range map[string]string{
		"ops":    "decision: a profile (placer profile --model's measured op times), not a decision: give it to eval, search or export as --profile FILE",
		"layers": "decision: a profile (placer profile --workload's layers), not a decision: give it to eval or search as --profile FILE with its --workload and --cluster",
		"":       "placer profile --workload's layers", // version 1: no kind, layers
	} {
		_, err := Decode([]byte(`{"format": "placer-profile", "version": 2, "kind": "` + kind + `", "complete": true}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("kind %q: %v; want %q", kind, err, want)
		}
	}
}
