package plan

import (
	"strings"
	"testing"
)

// TestPodFor: --cluster with --gpus as docs/cluster-scale.md spells them:
// 64 GPUs of one NVL72 rack, 512 GPUs as 8 racks of 64 however the racks
// are written, a count with no node count as the fewest nodes sharing it
// evenly; what cannot be so (more GPUs than the nodes written, a split
// leaving a compute tray part-used, per-node= written and disagreeing)
// refused in one line naming the spelling that works.
func TestPodFor(t *testing.T) {
	for _, c := range []struct {
		text    string
		gpus    int
		name    string // the pod's name; "" for an error
		perNode int
		err     string
	}{
		{"gb200-nvl72:1", 64, "gb200-nvl72:1,per-node=64", 64, ""},
		{"gb200-nvl72", 512, "gb200-nvl72:8,per-node=64", 64, ""},
		{"gb200-nvl72:8", 512, "gb200-nvl72:8,per-node=64", 64, ""},
		{"gb200-nvl72:8", 576, "gb200-nvl72:8", 72, ""},
		{"gb200-nvl72:8", 0, "gb200-nvl72:8", 72, ""},
		{"gb300-nvl72", 144, "gb300-nvl72:2", 72, ""},
		{"gb200-nvl72:2,power=off", 128, "gb200-nvl72:2,per-node=64,power=off", 64, ""},
		{"dgx-h100", 16, "dgx-h100:2", 8, ""},
		{"dgx-h100:1", 4, "dgx-h100:1,per-node=4", 4, ""},
		{"gb200-nvl72:7", 512, "", 0, "--gpus 512 and --cluster gb200-nvl72:7 (504 GPUs) disagree: 512 GPUs of gb200-nvl72's 72-GPU nodes are --cluster gb200-nvl72:8,per-node=64"},
		{"gb200-nvl72:8", 520, "", 0, "are --cluster gb200-nvl72:10,per-node=52"},
		{"gb200-nvl72", 100, "", 0, "are --cluster gb200-nvl72:5,per-node=20"},
		{"dgx-h100:2", 24, "", 0, "--gpus 24 and --cluster dgx-h100:2 (16 GPUs) disagree: 24 GPUs of dgx-h100's 8-GPU nodes are --cluster dgx-h100:3"},
		{"gb200-nvl72:8,per-node=64", 500, "", 0, "--gpus 500 and --cluster gb200-nvl72:8,per-node=64 (512 GPUs) disagree"},
	} {
		p, err := PodFor(c.text, c.gpus)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("PodFor(%q, %d) = %s, %v; want one line with %q", c.text, c.gpus, p.Name, err, c.err)
			}
		case err != nil || p.Name != c.name || p.PerNode != c.perNode || c.gpus > 0 && p.GPUs() != c.gpus:
			t.Errorf("PodFor(%q, %d) = %s (%d a node, %d GPUs), %v; want %s", c.text, c.gpus, p.Name, p.PerNode, p.GPUs(), err, c.name)
		}
	}
}

// TestPerNodeWholeHosts: per-node= on an NVL72 rack is a whole number of
// its 4-GPU compute trays, or fits in one; 65 is refused when the
// cluster is read, in one line, not when a plan's batch fails to divide.
func TestPerNodeWholeHosts(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"gb200-nvl72:8,per-node=64", true},
		{"gb200-nvl72:1,per-node=8", true},
		{"gb200-nvl72:1,per-node=2", true},
		{"gb300-nvl72:1,per-node=68", true},
		{"dgx-h100:1,per-node=5", true},
		{"gb200-nvl72:8,per-node=65", false},
		{"gb300-nvl72:1,per-node=6", false},
	} {
		_, err := ParsePod(c.text)
		if (err == nil) != c.ok {
			t.Errorf("ParsePod(%q): %v; want ok %v", c.text, err, c.ok)
		}
	}
	_, err := ParsePod("gb200-nvl72:8,per-node=65")
	want := `cluster "gb200-nvl72:8,per-node=65": per-node=65: a node of gb200-nvl72 is hosts of 4 GPUs: want at most 4 or a multiple of 4 (e.g. 64)`
	if err == nil || err.Error() != want {
		t.Errorf("per-node=65: %v; want %q", err, want)
	}
}

// TestResolveNamesTheStrategy: a refusal of the strategy names what it
// is where its String is empty (nothing written, or tp=1 alone), never
// "strategy :" (per-node=5 of a DGX: dp=5 does not divide 512).
func TestResolveNamesTheStrategy(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=4096,batch=512")
	p, err := ParsePod("dgx-h100:1,per-node=5")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"":      "strategy (every key at its default: tp=1, pp=1, every GPU a data-parallel replica): the batch of 512 is not divisible by dp=5 x mbs=1",
		"tp=1":  "strategy (every key at its default: tp=1, pp=1, every GPU a data-parallel replica): the batch of 512 is not divisible by dp=5 x mbs=1",
		"mbs=2": "strategy mbs=2: the batch of 512 is not divisible by dp=5 x mbs=2",
	} {
		s, err := ParseStrategy(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Resolve(m, s, p); err == nil || err.Error() != want {
			t.Errorf("strategy %q: %v; want %q", text, err, want)
		}
	}
}
