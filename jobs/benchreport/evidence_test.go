package benchreport

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/placer/placer/planner/bench"
)

var updateEvidence = flag.Bool("update", false, "write docs/mechanism-evidence.md from Evidence")

const evidenceDoc = "../../docs/mechanism-evidence.md"

// TestMechanismEvidence: each switch's effect on the bench
// (docs/mechanism-evidence.md, rewritten with -update, stale otherwise);
// a switch turned off where it is not on moves no row (the Grace host's
// host=x86 on every x86 Hopper and Blackwell row: the mechanism keeps to
// the racks it names); every effect counts its rows once.
func TestMechanismEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts every bench row and again those each switch is on in")
	}
	ctx := context.Background()
	effects, err := Evidence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range effects {
		if e.Changed > e.Rows || e.Rows > e.PartRows {
			t.Errorf("%s, %s: %d moved of %d on of %d rows", e.Switch, e.Part, e.Changed, e.Rows, e.PartRows)
		}
		if e.Part == bench.Validation && len(e.Sweeps) > 0 {
			t.Errorf("%s: validation sweeps listed (aggregates only)", e.Switch)
		}
	}
	// host=x86 on the rows already issued from x86 (every Hopper and
	// DGX Blackwell row) moves none.
	preds, err := predictions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range preds {
		c := strings.ToLower(p.cluster)
		if p.sw != nil || !(strings.HasPrefix(c, "dgx-h100") || strings.HasPrefix(c, "dgx-h200") || strings.HasPrefix(c, "dgx-b200")) {
			continue
		}
		e, err := repredict(ctx, p, p.cluster+",host=x86", p.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(e-p.err) > 1e-12 {
			t.Errorf("%s: host=x86 moves an x86 row (%+.4f -> %+.4f)", p.sweep, p.err, e)
		}
		n++
	}
	if n == 0 {
		t.Error("no x86 MLPerf row to check host=x86 against")
	}
	var buf bytes.Buffer
	WriteEvidence(&buf, effects)
	if *updateEvidence {
		if err := os.WriteFile(evidenceDoc, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(evidenceDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("docs/mechanism-evidence.md is stale: go test ./jobs/benchreport -run TestMechanismEvidence -update rewrites it")
	}
}

// TestEvidenceHidesFewValidationRows: a validation mean over one or two
// rows is those rows' own errors, so it is not written; over three it is.
func TestEvidenceHidesFewValidationRows(t *testing.T) {
	name := Switches()[0].Name
	for _, tc := range []struct {
		part string
		rows int
		want string
	}{
		{bench.Validation, 1, "| validation | 1 | 1 | (<3 rows) | (<3 rows) |"},
		{bench.Validation, 2, "| validation | 2 | 1 | (<3 rows) | (<3 rows) |"},
		{bench.Validation, 3, "| validation | 3 | 1 | 12.5% | 25.0% |"},
		{bench.Development, 1, "| development | 1 | 1 | 12.5% | 25.0% |"},
	} {
		var buf bytes.Buffer
		WriteEvidence(&buf, []SwitchEffect{{Switch: name, Part: tc.part, Rows: tc.rows, Changed: 1, With: 0.125, Without: 0.25, PartRows: 9, PartWith: 0.1, PartWithout: 0.1}})
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("%s, %d rows: no line %q in\n%s", tc.part, tc.rows, tc.want, buf.String())
		}
	}
}
