package transformer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNemotronHDefaultsRead: what transformers 5.24.0 writes for
// NemotronHConfig() at its defaults (testdata/hf5/nemotron_h-defaults.json:
// Nemotron 3's layers, layers_block_type linear_attention, moe,
// full_attention, mlp; hidden 4,096; 8 routed experts of
// moe_intermediate_size 7,688, top 2, a shared expert of 7,688) is read
// as the hybrid pattern "ME*-" with its experts, and its parameters
// counted by hand from transformers 5.24.0's modeling_nemotron_h.py:
//   - the Mamba-2 block (128 heads of 64: d_inner 8,192; 8 groups of a
//     state of 128; 4 taps): norm 4,096, in_proj 4,096 x (2 x 8,192 +
//     2 x 8 x 128 + 128 = 18,560) = 76,021,760, conv1d over x, B, C
//     (8,192 + 2,048 = 10,240 channels) x (4 + 1) = 51,200, dt_bias,
//     A_log and D 3 x 128 = 384, the gated norm 8,192, out_proj 8,192 x
//     4,096 = 33,554,432: 109,640,064;
//   - the attention block (32 heads of 128, 8 key-value heads): norm
//     4,096, q and o 2 x 4,096 x 4,096, k and v 2 x 4,096 x 1,024:
//     41,947,136;
//   - the MLP block (relu2, no gate): norm 4,096, up and down 2 x 4,096
//     x 21,504: 176,164,864;
//   - the block of experts: norm 4,096, router 8 x 4,096 = 32,768
//     (e_score_correction_bias a buffer), 8 routed experts and the shared
//     one, each up and down 2 x 4,096 x 7,688 = 62,980,096: 566,857,728;
//   - embedding 131,072 x 4,096 = 536,870,912; final norm 4,096 and the
//     untied lm_head 536,870,912.
//
// 1,968,355,712 in all; a token goes through 2 of the 8 routed experts:
// 6 x 62,980,096 less, 1,590,475,136 active.
func TestNemotronHDefaultsRead(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf5", "nemotron_h-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"moe"`) || !strings.Contains(string(data), `"transformers_version": "5.24.0"`) {
		t.Fatal("nemotron_h-defaults.json: not transformers 5.24.0's file with a moe layer")
	}
	m, err := FromHFConfig(data, "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Pattern != "ME*-" || m.Experts != 8 || m.TopK != 2 || m.ExpertFFN != 7688 || m.SharedExperts != 1 || m.MoELayers() != 1 {
		t.Errorf("read pattern %q, %d experts, top %d, expert ffn %d, %d shared, %d layers of experts; want ME*-, 8, 2, 7688, 1, 1",
			m.Pattern, m.Experts, m.TopK, m.ExpertFFN, m.SharedExperts, m.MoELayers())
	}
	if got := Params(m); got != 1968355712 {
		t.Errorf("Params %d, want 1,968,355,712 by hand", got)
	}
	if got := ActiveParams(m); got != 1590475136 {
		t.Errorf("ActiveParams %d, want 1,590,475,136 by hand", got)
	}
	// Read back from its own text.
	again, err := Parse(m.String())
	if err != nil || Params(again) != Params(m) || again.Pattern != m.Pattern {
		t.Errorf("String %q reads back as %v, %v", m.String(), again, err)
	}
}

// TestNemotronHExpertsRefused: what a NemotronH file with experts holds
// that placer does not model is refused in one line naming the field.
func TestNemotronHExpertsRefused(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf5", "nemotron_h-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"moe_latent_size": null`, `"moe_latent_size": 1024`, `field "moe_latent_size"`},
		{`"moe_shared_expert_intermediate_size": 7688`, `"moe_shared_expert_intermediate_size": 5000`, `field "moe_shared_expert_intermediate_size"`},
		{`"n_routed_experts": 8`, `"n_routed_experts": 0`, `field "n_routed_experts"`},
	} {
		text := strings.Replace(string(data), c.from, c.to, 1)
		if text == string(data) {
			t.Fatalf("%s: not in the file", c.from)
		}
		_, err := FromHFConfig([]byte(text), "c.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %s", c.to, err, c.want)
		}
	}
}
