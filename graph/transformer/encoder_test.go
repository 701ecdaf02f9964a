package transformer

import "testing"

// TestEncoder: BERT-large (bert-large preset) at 512 tokens: a query
// attends to all 512 keys, not the causal 256 of the same shape as a
// decoder; 48 sequences of 512 = 24,576 tokens put 24,576 x 76 / 512 =
// 3,648 through the output layer; the workload writes its encoder keys
// and reads back to the same model.
func TestEncoder(t *testing.T) {
	m, err := Parse("bert-large:seq=512,batch=384")
	if err != nil {
		t.Fatal(err)
	}
	if got := CausalKeys(m); got != 512 {
		t.Errorf("keys %g, want 512", got)
	}
	dec := m
	dec.Bidirectional = false
	if got := CausalKeys(dec); got != 256 {
		t.Errorf("decoder keys %g, want 256", got)
	}
	if got := m.OutputTokens(24576); got != 3648 {
		t.Errorf("output tokens %g, want 3648", got)
	}
	if got := dec.Shape(); got.Predicted != 76 || (Spec{Seq: 512}).OutputTokens(24576) != 24576 {
		t.Errorf("a decoder's output runs on every token")
	}
	const want = "gpt:layers=24,hidden=1024,heads=16,seq=512,vocab=30522,batch=384,bidirectional=1,predicted=76"
	if m.String() != want {
		t.Errorf("String %q, want %q", m.String(), want)
	}
	back, err := Parse(want)
	if err != nil || back != m {
		t.Errorf("Parse(String) = %+v, %v; want %+v", back, err, m)
	}
	// packed: two samples of 256 a sequence each attend within their own 256
	m.Seq = 256
	if got := CausalKeys(m); got != 256 {
		t.Errorf("keys at 256 %g, want 256", got)
	}
}
