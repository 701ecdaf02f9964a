package transformer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNemotronHDefaultsRefused: what transformers 5.24.0 writes for
// NemotronHConfig() at its defaults (testdata/hf5/nemotron_h-defaults.json:
// Nemotron 3's layers, layers_block_type linear_attention, moe,
// full_attention, mlp; 8 routed experts of moe_intermediate_size 7,688,
// top 2, a shared expert of 7,688) has a layer of experts, which the
// hybrid reader does not model yet: refused in one line naming the
// field, not read as something else.
func TestNemotronHDefaultsRefused(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf5", "nemotron_h-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"moe"`) || !strings.Contains(string(data), `"transformers_version": "5.24.0"`) {
		t.Fatal("nemotron_h-defaults.json: not transformers 5.24.0's file with a moe layer")
	}
	_, err = FromHFConfig(data, "c.json")
	want := `c.json: field "layers_block_type"`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "moe (experts) layers") || strings.Contains(err.Error(), "\n") {
		t.Errorf("read: %v, want one line from %s naming the moe layers", err, want)
	}
}
