"""Tiny random-weight configs of the Hugging Face decoder families infer covers (issue 46).

Each entry: name -> (config.json dict, the features it switches on). Sizes are tiny (hidden 64,
2 layers, vocab 512) and every family-specific feature is on, so that a test model of each
exercises what a real checkpoint of the family does.
"""

VOCAB = 512
BASE = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=256, torch_dtype="float32",
            bos_token_id=1, eos_token_id=2, pad_token_id=0)


def cfg(arch, model_type, **kw):
    c = dict(BASE, architectures=[arch], model_type=model_type)
    c.update(kw)
    return c


FAMILIES = {
    "llama": (cfg("LlamaForCausalLM", "llama", num_key_value_heads=2), "RMSNorm, RoPE, GQA, SwiGLU"),
    "llama3-rope": (cfg("LlamaForCausalLM", "llama", num_key_value_heads=2,
                        rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                          high_freq_factor=4.0, original_max_position_embeddings=64)),
                    "llama3 rope scaling"),
    "qwen2": (cfg("Qwen2ForCausalLM", "qwen2", num_key_value_heads=2), "QKV bias"),
    "qwen3": (cfg("Qwen3ForCausalLM", "qwen3", num_key_value_heads=2, head_dim=16), "per-head q/k RMSNorm"),
    "mistral": (cfg("MistralForCausalLM", "mistral", num_key_value_heads=2, sliding_window=None),
                "no window"),
    "gemma": (cfg("GemmaForCausalLM", "gemma", num_key_value_heads=1, head_dim=16),
              "MQA, (1 + w) RMSNorm, scaled embedding, GELU-tanh gate"),
    "phi3": (cfg("Phi3ForCausalLM", "phi3", num_key_value_heads=4), "fused QKV and gate/up weights"),
    "gpt2": (cfg("GPT2LMHeadModel", "gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=256),
             "LayerNorm, learned positions, Conv1D fused QKV, GELU-tanh"),
    "gpt_neox": (cfg("GPTNeoXForCausalLM", "gpt_neox", rotary_pct=0.5), "parallel residual, partial rotary"),
    "opt": (cfg("OPTForCausalLM", "opt", ffn_dim=160, word_embed_proj_dim=64), "learned positions with offset, ReLU"),
    "phi": (cfg("PhiForCausalLM", "phi", partial_rotary_factor=0.5), "parallel attn+MLP, partial rotary"),
    "stablelm": (cfg("StableLmForCausalLM", "stablelm", num_key_value_heads=2, partial_rotary_factor=0.25),
                 "LayerNorm, partial rotary"),
    "olmo2": (cfg("Olmo2ForCausalLM", "olmo2", num_key_value_heads=2), "q/k norm, post-norm"),
    "mistral-window": (cfg("MistralForCausalLM", "mistral", num_key_value_heads=2, sliding_window=8),
                       "sliding window 8"),
    "gemma2": (cfg("Gemma2ForCausalLM", "gemma2", num_key_value_heads=2, head_dim=16, sliding_window=8,
                   attn_logit_softcapping=50.0, final_logit_softcapping=30.0, query_pre_attn_scalar=16),
               "alternating sliding window, attention and final logit softcap"),
    "gemma3": (cfg("Gemma3ForCausalLM", "gemma3_text", num_key_value_heads=2, head_dim=16, sliding_window=8,
                   query_pre_attn_scalar=16, layer_types=["sliding_attention", "full_attention"]),
               "sliding window layers, q/k norm, local rope base"),
    "starcoder2": (cfg("Starcoder2ForCausalLM", "starcoder2", num_key_value_heads=2, sliding_window=8),
                   "sliding window, LayerNorm, bias"),
    "falcon-7b": (cfg("FalconForCausalLM", "falcon", multi_query=True, parallel_attn=True,
                      new_decoder_architecture=False, bias=False), "MQA, fused QKV, parallel attn"),
    "falcon-40b": (cfg("FalconForCausalLM", "falcon", new_decoder_architecture=True, num_kv_heads=2,
                       bias=False), "grouped fused QKV, two LayerNorms"),
    "falcon-rw": (cfg("FalconForCausalLM", "falcon", alibi=True, multi_query=False, parallel_attn=False,
                      new_decoder_architecture=False, bias=True), "ALiBi"),
    "gptj": (cfg("GPTJForCausalLM", "gptj", n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=256),
             "interleaved partial rotary from a sin/cos table"),
    "codegen": (cfg("CodeGenForCausalLM", "codegen", n_embd=64, n_layer=2, n_head=8, hidden_size=64,
                    num_attention_heads=8, rotary_dim=4,
                    n_positions=256, n_ctx=256), "fused QKV in mp_num (4) groups of 2 heads, table rotary"),
    "gpt_bigcode": (cfg("GPTBigCodeForCausalLM", "gpt_bigcode", n_embd=64, n_layer=2, n_head=4,
                        n_positions=256, multi_query=True), "MQA (one KV head), fused QKV"),
    "mpt": (cfg("MptForCausalLM", "mpt", d_model=64, n_layers=2, n_heads=4, max_seq_len=256,
                attn_config=dict(alibi=True, qk_ln=False)), "ALiBi, fused QKV, no bias"),
    "persimmon": (cfg("PersimmonForCausalLM", "persimmon", partial_rotary_factor=0.5, qk_layernorm=True),
                  "fused QKV, q/k LayerNorm, relu², partial rotary"),
    "bloom": (cfg("BloomForCausalLM", "bloom", n_embed=64, n_layer=2, n_head=4), "ALiBi, fused QKV, GELU-tanh"),
    "nemotron": (cfg("NemotronForCausalLM", "nemotron", num_key_value_heads=2, partial_rotary_factor=0.5),
                 "relu², LayerNorm1P, partial rotary"),
    "olmo": (cfg("OlmoForCausalLM", "olmo", num_key_value_heads=2, clip_qkv=0.5), "clip_qkv, bias-free LayerNorm"),
    "cohere": (cfg("CohereForCausalLM", "cohere", num_key_value_heads=2, logit_scale=0.25, use_qk_norm=False),
               "bias-free LayerNorm, parallel block, logit scale, interleaved rotary"),
    "granite": (cfg("GraniteForCausalLM", "granite", num_key_value_heads=2, logits_scaling=4.0,
                    embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.2),
                "logits scaling, multipliers"),
    "yarn": (cfg("Qwen2ForCausalLM", "qwen2", num_key_value_heads=2,
                 rope_scaling=dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=64)),
             "YaRN rope scaling"),
    "mixtral": (cfg("MixtralForCausalLM", "mixtral", num_key_value_heads=2, num_local_experts=4, intermediate_size=32,
                    num_experts_per_tok=2), "MoE top-2 of 4"),
    "qwen2_moe": (cfg("Qwen2MoeForCausalLM", "qwen2_moe", num_key_value_heads=2, num_experts=4,
                      num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=64),
                  "MoE top-2 of 4 + gated shared expert"),
    "qwen3_moe": (cfg("Qwen3MoeForCausalLM", "qwen3_moe", num_key_value_heads=2, head_dim=16, num_experts=4,
                      num_experts_per_tok=2, moe_intermediate_size=32, norm_topk_prob=True),
                  "MoE top-2 of 4, q/k norm"),
    "deepseek_v3": (cfg("DeepseekV3ForCausalLM", "deepseek_v3", num_key_value_heads=4, n_routed_experts=8,
                        num_experts_per_tok=2, moe_intermediate_size=32, n_group=2, topk_group=1,
                        first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32, qk_rope_head_dim=8,
                        qk_nope_head_dim=8, v_head_dim=16, n_shared_experts=1),
                    "MLA, group-limited MoE routing"),
}
