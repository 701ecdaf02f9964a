package profile

import "testing"

// Whose layer a profile timed, as eval prints it: nothing for placer's
// own (framework pytorch, or none in a hand-made file), else the
// framework, its version and the class, its module in brackets.
func TestTimedLayer(t *testing.T) {
	for _, c := range []struct {
		s    Software
		want string
	}{
		{Software{Framework: "pytorch"}, ""},
		{Software{}, ""},
		{Software{Framework: "transformers", FrameworkVersion: "5.24.0", Layer: "transformers.models.llama.modeling_llama.LlamaDecoderLayer"},
			"transformers 5.24.0's LlamaDecoderLayer (transformers.models.llama.modeling_llama)"},
		{Software{Framework: "torchtitan", Layer: "TransformerBlock"}, "torchtitan's TransformerBlock"},
		{Software{Framework: "torchtitan", FrameworkVersion: "0.2.2"}, "torchtitan 0.2.2's layer"},
	} {
		if got := c.s.TimedLayer(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
