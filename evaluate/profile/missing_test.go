package profile

import (
	"slices"
	"strings"
	"testing"
)

// Missing says what an incomplete layers profile lacks of what its run
// asked: counted where the file says what was asked (asked, since
// 2026-11-27), else the parts it has none of and that its layer shapes
// were cut short; nothing for a complete profile (testdata/small.json, a
// version 1 file, reads as before) or an ops profile.
func TestMissing(t *testing.T) {
	base, data := small(t) // complete: 4 layers, 1 embedding, 1 loss, an optimizer, 4 collectives over 4 GPUs
	if got := base.Missing(); got != nil {
		t.Errorf("complete: %q, want nothing", got)
	}
	cut := func(f func(p *Profile)) *Profile {
		p, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		p.Complete = false
		f(p)
		return p
	}
	for _, c := range []struct {
		name string
		p    *Profile
		want []string
	}{
		{"asked, layers cut", cut(func(p *Profile) { p.Asked = &Asked{Layers: 10, Embedding: 1, Loss: 1, Collectives: 4} }),
			[]string{"6 of 10 layer shapes"}},
		{"asked, no layer", cut(func(p *Profile) {
			p.Layers, p.Collectives = nil, p.Collectives[:1]
			p.Asked = &Asked{Layers: 10, Embedding: 3, Loss: 1, Collectives: 4}
		}), []string{"2 of 3 embedding shapes", "3 of 4 collectives", "the 10 layer shapes"}},
		{"asked, only the host", cut(func(p *Profile) {
			p.Layers, p.Embedding, p.Loss, p.Optimizer, p.Collectives = nil, nil, nil, nil, nil
			p.Asked = &Asked{Layers: 2, Embedding: 1, Loss: 1}
		}), []string{"the embedding", "the loss", "the optimizer's step", "the 2 layer shapes"}},
		{"not asked (an older file)", cut(func(p *Profile) { p.Embedding, p.Collectives = nil, nil }),
			[]string{"the embedding", "the collectives", "layer shapes past the 4 measured (how many were asked is not recorded)"}},
		{"not asked, one process", cut(func(p *Profile) { p.Collectives, p.Device.Count = nil, 1 }),
			[]string{"layer shapes past the 4 measured (how many were asked is not recorded)"}},
	} {
		if got := c.p.Missing(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// asked is read back, and refused negative.
	p, err := Decode([]byte(strings.Replace(string(data), `"complete": true`, `"complete": false, "asked": {"layers": 5, "embedding": 1, "loss": 1, "collectives": 4}`, 1)))
	if err != nil || p.Asked == nil || p.Asked.Layers != 5 || !slices.Equal(p.Missing(), []string{"1 of 5 layer shapes"}) {
		t.Errorf("asked read back: %v, %+v", err, p)
	}
	if _, err := Decode([]byte(strings.Replace(string(data), `"complete": true`, `"complete": false, "asked": {"layers": -1, "embedding": 1, "loss": 1, "collectives": 4}`, 1))); err == nil || !strings.Contains(err.Error(), "asked: layers -1") {
		t.Errorf("negative asked: %v", err)
	}
}
