"""Tiny mixture-of-experts models from transformers' config classes
(random weights, nothing downloaded) for the exporter's tests
(test_moe.py) and for trying it by hand:

    python3 tools/dev/torchexport/torchexport.py --model python/placer_torch/tests/exporter/tiny_moe.py:mixtral \
        --input-shape 8:int64 --batch 2 -o mixtral.json

Their experts call torch._grouped_mm (transformers 5.x), whose fake-tensor
rule refuses FP32 (docs/import.md, "Ops fake tensors refuse")."""


def mixtral(layers=2, hidden=32, experts=4, top_k=2, vocab=64):
    """transformers' MixtralForCausalLM: 2 layers of 4 experts, top 2."""
    import transformers
    cfg = transformers.MixtralConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
                                     num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
                                     num_local_experts=experts, num_experts_per_tok=top_k,
                                     max_position_embeddings=32, use_cache=False)
    return transformers.MixtralForCausalLM(cfg)


def qwen3_moe(layers=2, hidden=32, experts=4, top_k=2, vocab=64):
    """transformers' Qwen3MoeForCausalLM: 2 sparse layers of 4 experts, top 2."""
    import transformers
    cfg = transformers.Qwen3MoeConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden,
                                      moe_intermediate_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                                      num_key_value_heads=1, head_dim=16, num_experts=experts,
                                      num_experts_per_tok=top_k, decoder_sparse_step=1, max_position_embeddings=32,
                                      use_cache=False)
    return transformers.Qwen3MoeForCausalLM(cfg)
