package placements

import (
	"bytes"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/opcheck"
)

// TestWriteCheckedStages: a placement over two GPUs gets one row per GPU
// (its ops, host issue, GPU work, and which bounds it), within 120
// columns; one GPU gets none.
func TestWriteCheckedStages(t *testing.T) {
	two := opcheck.Report{Hardware: "h100", Stages: []opcheck.StageCheck{
		{GPU: 0, Ops: 1, Issue: 14.04e-6, GPUTime: 3e-6, HostBound: true},
		{GPU: 1, Ops: 2, Issue: 32.65e-6, GPUTime: 1.2e-3},
	}}
	var buf bytes.Buffer
	if err := WriteChecked(&buf, two); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"bound by", "host issue", "GPU work", "host │", "GPU │"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("%d columns: %s", n, line)
		}
	}
	buf.Reset()
	one := opcheck.Report{Hardware: "h100", Stages: nil}
	if err := WriteChecked(&buf, one); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "bound by") {
		t.Errorf("one GPU printed stages:\n%s", buf.String())
	}
}

// TestWriteCheckedCasts: a step under autocast says its casts in one
// line (the two-layer MLP of opcheck's TestCasts: 11 casts, 2736 bytes,
// 11 us of 113 us of GPU work, 11 x 14.04 us of host issue); a step
// without autocast says nothing of casts.
func TestWriteCheckedCasts(t *testing.T) {
	r := opcheck.Report{Hardware: "h100", Casts: &opcheck.Casts{DType: "bf16", Forward: 6, Backward: 5, Bytes: 2736,
		GPU: 11e-6, Share: 11.0 / 113, Issue: 11 * 14.04e-6}}
	var buf bytes.Buffer
	if err := WriteChecked(&buf, r); err != nil {
		t.Fatal(err)
	}
	want := "autocast bf16: 11 casts (6 forward, 5 backward) move 2.7 KiB: 11.0 us of GPU work (9.7%), 154.4 us of host issue\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("no %q in\n%s", want, buf.String())
	}
	buf.Reset()
	r.Casts = nil
	if err := WriteChecked(&buf, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "autocast") {
		t.Errorf("a step without autocast printed casts:\n%s", buf.String())
	}
}
