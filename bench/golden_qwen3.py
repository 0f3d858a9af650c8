#!/usr/bin/env python3
"""Golden data for pagellm's Qwen3 forward pass, made with Hugging Face transformers.

Random-initialises two small Qwen3ForCausalLM configurations (head_dim 128, GQA, 2 layers;
one tied and saved as float32, one untied saved as bfloat16), saves them with save_pretrained
(safetensors) and records float32 logits at every position for fixed token sequences, run in
float32 on the CPU with eager attention. Weights of the bf16 model are rounded to bf16 before
the logits are taken, so the saved checkpoint holds exactly the weights that made them.

usage: python3 golden_qwen3.py OUTDIR      (writes OUTDIR/golden.tar)
The tar unpacks to tests/golden/: one directory per model, golden.json, *.f32 logits
(raw little-endian float32, [len, vocab]).
"""
import json
import os
import sys
import tarfile

import torch
import transformers
from transformers import Qwen3Config, Qwen3ForCausalLM

MODELS = [
    # name, tied, save dtype, rope theta, seed
    ("qwen3-tied-f32", True, torch.float32, 1000000.0, 1),
    ("qwen3-untied-bf16", False, torch.bfloat16, 10000.0, 2),
]
VOCAB, HIDDEN, INTER, LAYERS, HEADS, KV_HEADS, HEAD_DIM = 320, 32, 96, 2, 4, 2, 128
SEQ_LENS = [24, 17]


def make_config(tied, theta):
    kw = dict(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=INTER, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM,
              max_position_embeddings=512, rms_norm_eps=1e-6, tie_word_embeddings=tied,
              attention_bias=False, initializer_range=0.2, bos_token_id=1, eos_token_id=2)
    if int(transformers.__version__.split(".")[0]) >= 5:
        kw["rope_parameters"] = {"rope_type": "default", "rope_theta": theta}
    else:
        kw["rope_theta"] = theta
    return Qwen3Config(**kw)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "golden_out"
    stage = os.path.join(os.environ.get("GOLDEN_STAGE", "/tmp/golden_stage"), "golden")
    os.makedirs(stage, exist_ok=True)
    os.makedirs(out, exist_ok=True)
    torch.set_float32_matmul_precision("highest")
    manifest = {"transformers": transformers.__version__, "torch": torch.__version__, "models": []}
    for name, tied, dtype, theta, seed in MODELS:
        torch.manual_seed(seed)
        cfg = make_config(tied, theta)
        try:
            model = Qwen3ForCausalLM._from_config(cfg, attn_implementation="eager")
        except (AttributeError, TypeError, ValueError):
            model = Qwen3ForCausalLM(cfg)
        model = model.float().eval()
        with torch.no_grad():
            for pname, p in model.named_parameters():
                if "norm" in pname:  # norms away from 1 so a missed norm weight shows
                    p.copy_(1.0 + 0.2 * torch.randn_like(p))
                if dtype == torch.bfloat16:
                    p.copy_(p.to(torch.bfloat16).float())
        gen = torch.Generator().manual_seed(100 + seed)
        entry = {"name": name, "tied": tied, "dtype": str(dtype).replace("torch.", ""), "rope_theta": theta,
                 "vocab": VOCAB, "sequences": []}
        for i, n in enumerate(SEQ_LENS):
            ids = torch.randint(0, VOCAB, (1, n), generator=gen)
            with torch.no_grad():
                logits = model(input_ids=ids).logits[0].float().contiguous()
            fname = f"{name}.seq{i}.f32"
            with open(os.path.join(stage, fname), "wb") as f:
                f.write(logits.numpy().astype("<f4").tobytes())
            entry["sequences"].append({"ids": ids[0].tolist(), "logits": fname,
                                       "max_abs_logit": float(logits.abs().max())})
        try:
            model.to(dtype).save_pretrained(os.path.join(stage, name), safe_serialization=True)
        except TypeError:
            model.to(dtype).save_pretrained(os.path.join(stage, name))
        manifest["models"].append(entry)
        print(name, "saved;", [s["max_abs_logit"] for s in entry["sequences"]])
    with open(os.path.join(stage, "golden.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with tarfile.open(os.path.join(out, "golden.tar"), "w") as t:
        t.add(stage, arcname="golden")
    for root, _, files in os.walk(stage):
        for fn in files:
            print(os.path.join(root, fn), os.path.getsize(os.path.join(root, fn)))


if __name__ == "__main__":
    main()
