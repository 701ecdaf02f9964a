package plans

import (
	"math"
	"strconv"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// megatronModel is Megatron-LM's arguments for the settings of model m's
// config.json (m.Config; none for a model by its shape, whose settings
// are Megatron-LM's defaults), as Megatron-Bridge's AutoBridge maps them
// to Megatron-Core's model (v0.6.0: conversion/model_bridge.py's
// CONFIG_MAPPING and each family's provider_bridge): the rotary base,
// the norms' epsilon, no dropout but the attention's (Megatron-LM's
// default is 0.1 in both), query and key norms, query, key and value
// biases, rope scaling (Llama 3's; YaRN's factor and mscales for latent
// attention), and the router (its score, pre-softmax, balancing loss and
// coefficient, expert bias, group-limited routing, top-k scaling,
// FP32). GPT-OSS's YaRN has no pretrain_gpt.py flag in core_v0.16.1
// (--position-embedding-type has no yarn): MegatronArgs refuses it
// (megatronRope).
func megatronModel(m transformer.Spec) []string {
	c := m.Config
	if c.ModelType == "" {
		return nil
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var a []string
	add := func(xs ...string) { a = append(a, xs...) }
	if c.RopeTheta > 0 {
		// Megatron-LM's --rotary-base is an int (arguments.py: type=int):
		// a whole base in digits, never 1e+06, which its parser refuses.
		add("--rotary-base", strconv.FormatFloat(math.Round(c.RopeTheta), 'f', 0, 64))
	}
	if c.NormEps > 0 {
		add("--norm-epsilon", num(c.NormEps))
	}
	add("--attention-dropout", num(c.AttentionDropout), "--hidden-dropout", "0")
	if c.QKNorm {
		add("--qk-layernorm")
	}
	if c.QKVBias {
		add("--add-qkv-bias")
	}
	if r := c.RotaryPercent; r > 0 && r != 1 {
		// Rotary positions over a part of each head (Nemotron's and
		// GLM-4.5's partial_rotary_factor 0.5).
		add("--rotary-percent", num(r))
	}
	switch {
	case c.RopeScaling == "llama3":
		add("--use-rope-scaling", "--rope-scaling-factor", num(c.RopeFactor))
	case c.RopeScaling == "yarn" && m.MLA():
		add("--rotary-scaling-factor", num(c.RopeFactor), "--mscale", num(c.MScale), "--mscale-all-dim", num(c.MScaleAll))
	}
	if !m.MoE() {
		return a
	}
	deepseek := strings.HasPrefix(c.ModelType, "deepseek")
	switch {
	case deepseek:
		add("--moe-router-load-balancing-type", "seq_aux_loss")
	case c.ModelType == "gpt_oss":
		add("--moe-router-load-balancing-type", "none")
	default:
		add("--moe-router-load-balancing-type", "aux_loss")
	}
	add("--moe-aux-loss-coeff", num(c.AuxLoss))
	if routerPreSoftmax(m) {
		add("--moe-router-pre-softmax")
	}
	if c.RouterScore != "" && c.RouterScore != "softmax" {
		add("--moe-router-score-function", c.RouterScore)
	}
	if c.ExpertBias {
		add("--moe-router-enable-expert-bias")
	}
	if c.RouterScale > 0 {
		add("--moe-router-topk-scaling-factor", num(c.RouterScale))
	}
	if c.RouterGroups > 0 {
		add("--moe-router-num-groups", strconv.Itoa(c.RouterGroups), "--moe-router-group-topk", strconv.Itoa(c.RouterGroupK))
	}
	if deepseek {
		add("--moe-router-dtype", "fp32")
	}
	return a
}

// routerPreSoftmax reports whether m's router takes the softmax over
// every expert before its top k (Megatron-Core's moe_router_pre_softmax):
// DeepSeek's, and Qwen's without norm_topk_prob (AutoBridge v0.6.0's
// deepseek_v3_bridge.py and qwen3_moe_bridge.py); the others renormalise
// the top k's scores, which is the softmax over them.
func routerPreSoftmax(m transformer.Spec) bool {
	c := m.Config
	switch {
	case strings.HasPrefix(c.ModelType, "deepseek"):
		return true
	case strings.HasPrefix(c.ModelType, "qwen"):
		return !c.NormTopK
	}
	return false
}
