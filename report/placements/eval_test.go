package placements

import (
	"bytes"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate"
)

// TestEvalSentAndReceived: two replicas of a two-GPU placement, GPU 0
// sending 5 MiB to GPU 1 and 3 MiB back in each replica (16 MiB of
// transfers), and a ring all-reduce in which each GPU sends and receives
// 2 MiB (8 MiB): GPU 0 sends 5 + 2 = 7 MiB and receives 3 + 2 = 5, GPU 1
// the other way round; the four GPUs' sent add up to the 24 MiB moved,
// and the table says the collectives are in them.
func TestEvalSentAndReceived(t *testing.T) {
	const mib = 1 << 20
	r := evaluate.Result{
		StepTime: 1, DeviceBusy: make([]float64, 4), PeakMemory: make([]int64, 4), Capacity: []int64{1, 1, 1, 1},
		BytesMoved: 24 * mib, Transfers: 4, CollectiveBytes: 8 * mib,
		LinkBytes: []int64{
			0, 5 * mib, 0, 0,
			3 * mib, 0, 0, 0,
			0, 0, 0, 5 * mib,
			0, 0, 3 * mib, 0,
		},
		Collective: []int64{2 * mib, 2 * mib, 2 * mib, 2 * mib},
	}
	e := NewEval(&r, 0.5, []int{1, 1, 1, 1})
	var sent int64
	for k, d := range e.PerDevice {
		out, in := int64(7*mib), int64(5*mib)
		if k%2 == 1 {
			out, in = in, out
		}
		if d.BytesOut != out || d.BytesIn != in || d.Collective != 2*mib {
			t.Errorf("GPU %d sends %d, receives %d, %d of them in collectives; want %d, %d, %d", k, d.BytesOut, d.BytesIn, d.Collective, out, in, 2*mib)
		}
		sent += d.BytesOut
	}
	if sent != e.BytesMoved {
		t.Errorf("the GPUs send %d bytes, %d moved", sent, e.BytesMoved)
	}
	var b bytes.Buffer
	if err := WriteEval(&b, e); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"24.0 MiB: 16.0 MiB in 4 transfers, 8.0 MiB by collectives", "│ 7.0 MiB │  5.0 MiB │", "sent and received: each GPU's transfers and its part of the collectives"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the eval table lacks %q:\n%s", want, b.String())
		}
	}
	r.Collective, r.CollectiveBytes, r.BytesMoved = nil, 0, 16*mib
	b.Reset()
	if err := WriteEval(&b, NewEval(&r, 0.5, []int{1, 1, 1, 1})); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "16.0 MiB in 4 transfers") || strings.Contains(s, "collectives") {
		t.Errorf("without collectives the table speaks of them:\n%s", s)
	}
}
