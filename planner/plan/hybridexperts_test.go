package plan

import (
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
)

// TestHybridExpertsRefused: a Nemotron-H with a block of experts (the
// pattern transformers 5.24.0's NemotronHConfig defaults read as, ME*-)
// is read and counted (graph/transformer), and a plan of it refused in
// one line naming the experts; the same hybrid without them resolves.
func TestHybridExpertsRefused(t *testing.T) {
	const shape = "llama:layers=4,hidden=256,heads=4,seq=256,vocab=1000,batch=8,act=relu2,ssm_heads=8,ssm_head_dim=32,ssm_state=16,ssm_groups=2,ssm_conv=4,ssm_chunk=64"
	p, err := PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseStrategy("dp=8")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, want string }{
		{shape + ",pattern=ME*-,experts=8,topk=2,expert_ffn=128,shared=1", "layers of experts (E) are read and counted, not priced"},
		{shape + ",pattern=M-*-", ""},
	} {
		m, err := transformer.Parse(c.text)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(m, s, p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.text, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", c.text, err, c.want)
		}
	}
}
