// Package defaultmodel embeds the default pre-trained policy that
// `placer infer` and `placer finetune` use when no model is named, and the
// default pre-trained move head of go-scored-pretrained and
// go-scored-zero-shot. The files are data/default.policy, written by
// `make default-model`, and data/default.head, written by `make
// default-head`; a build without one has no such default and Load or
// LoadHead says how to get one.
//
// May import: methods/gdp/policy
package defaultmodel
