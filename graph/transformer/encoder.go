package transformer

import "strconv"

// An encoder-only model (BERT: Devlin et al., "BERT: Pre-training of Deep
// Bidirectional Transformers for Language Understanding", arXiv
// 1810.04805) is a GPT-family Spec (learned positions, layer norms, a GeLU
// MLP of 4 x Hidden, biases, the output layer tied to the token embedding)
// with two differences placer costs:
//   - Bidirectional: every query attends to every key of its sequence (or,
//     packed, of its own sample), s keys, not the causal s/2;
//   - Predicted: the masked-language-model head (BERT's "transform", a
//     dense layer of Hidden x Hidden, GeLU and a layer norm, then the
//     decoder tied to the embedding) runs on the masked positions only,
//     Predicted of each sequence's Seq (NVIDIA's MLPerf BERT:
//     max_predictions_per_seq 76 of 512, its dense_seq_output gathering
//     them before the head), and a next-sentence head (a pooler of Hidden
//     x Hidden with tanh on each sample's first token, then 2 classes).

// bertLarge is BERT-large as MLPerf Training's BERT benchmark trains it
// (mlcommons/training language_model/tensorflow/bert and NVIDIA's
// run_pretraining.py bert_config.json: 24 layers, hidden 1,024, 16 heads,
// intermediate 4,096, vocabulary 30,522, 512 positions;
// max_predictions_per_seq 76 in its MLLOG records).
var bertLarge = Spec{Family: "gpt", Layers: 24, Hidden: 1024, Heads: 16, KVHeads: 16, FFN: 4096, Seq: 512,
	Vocab: 30522, Batch: 1, Tied: true, Bidirectional: true, Predicted: 76}

func init() { presets["bert-large"] = bertLarge }

// OutputTokens is how many of n tokens the output layer (and its loss)
// runs on: all of them in a decoder, Predicted of every Seq in an encoder
// whose MLM head gathers the masked positions.
func (m Spec) OutputTokens(n float64) float64 {
	if m.Predicted <= 0 || m.Seq <= 0 || m.Predicted >= m.Seq {
		return n
	}
	return n * float64(m.Predicted) / float64(m.Seq)
}

// encoderKey reads the encoder's workload keys (bidirectional=1,
// predicted=N); false for any other key.
func (m *Spec) encoderKey(k string, n int) bool {
	switch k {
	case "bidirectional":
		m.Bidirectional = n == 1
		return n == 1
	case "predicted":
		m.Predicted = n
		return true
	}
	return false
}

// encoderString writes the encoder's keys as encoderKey reads them.
func (m Spec) encoderString() string {
	s := ""
	if m.Bidirectional {
		s += ",bidirectional=1"
	}
	if m.Predicted > 0 {
		s += ",predicted=" + strconv.Itoa(m.Predicted)
	}
	return s
}
