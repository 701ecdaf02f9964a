package plan

import (
	"slices"
	"strings"
	"testing"
)

// TestFineTuneParse: the fine-tuning keys read and written back, their
// defaults (rank 16, every target) and their refusals in one line.
func TestFineTuneParse(t *testing.T) {
	for _, c := range []struct {
		text    string
		rank    int
		targets LoRATargets
		pack    []int
		written string
		err     string
	}{
		{"dp=8,peft=lora", 16, LoRAAll, nil, "dp=8,peft=lora,lora-rank=16", ""},
		{"dp=8,peft=lora,lora-rank=8,lora-targets=qkv+fc2", 8, LoRAQKV | LoRAFC2, nil, "dp=8,peft=lora,lora-rank=8,lora-targets=qkv+fc2", ""},
		{"dp=8,peft=lora,lora-targets=linear_proj", 16, LoRAProj, nil, "dp=8,peft=lora,lora-rank=16,lora-targets=proj", ""},
		{"dp=8,pack=on,pack-len=512:2048", 0, LoRAAll, []int{512, 2048}, "dp=8,pack=on,pack-len=512:2048", ""},
		{"dp=8,pack-len=1024", 0, LoRAAll, []int{1024}, "dp=8,pack=on,pack-len=1024", ""},
		{"dp=8,pack=off", 0, LoRAAll, nil, "dp=8", ""},
		{"dp=8,pack=on", 0, 0, nil, "", "pack=on without pack-len"},
		{"dp=8,lora-rank=8", 0, 0, nil, "", "without peft=lora"},
		{"dp=8,peft=dora", 0, 0, nil, "", `"dora": want lora or none`},
		{"dp=8,peft=lora,lora-targets=q_proj", 0, 0, nil, "", `"q_proj" is not a linear module`},
		{"dp=8,pack-len=0", 0, 0, nil, "", "not a whole number"},
	} {
		s, err := ParseStrategy(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want one line with %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if s.LoRARank != c.rank || s.Targets() != c.targets || !slices.Equal(s.PackLens, c.pack) || s.String() != c.written {
			t.Errorf("%s: rank %d, targets %s, pack %v, written %q; want %d, %s, %v, %q", c.text, s.LoRARank, s.Targets(), s.PackLens, s.String(), c.rank, c.targets, c.pack, c.written)
		}
		if back, err := ParseStrategy(s.String()); err != nil || !back.Equal(s) {
			t.Errorf("%s: written %q reads back as %+v (%v)", c.text, s.String(), back, err)
		}
	}
}
