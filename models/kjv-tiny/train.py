#!/usr/bin/env python3
"""Trains kjv-tiny: a small Llama-architecture language model of the King James Bible.

The text is Debian's bible-kjv-text package (version 4.38), read through the `bible` program of
the bible-kjv package (`apt-get install -y bible-kjv-text` installs both):

    bible -f Gen1:1-Rev22:21      # 31,102 lines "Ge1:1 In the beginning God created ..."

Steps, all deterministic (fixed seeds, torch.use_deterministic_algorithms, fixed thread count):

 1. Text. Each line's verse reference ("Ge1:1", "1Sm3:4") is cut off and runs of whitespace
    are folded to one space; nothing else is changed (the package's text is plain ASCII, no
    italics or other markup). Verses are grouped into their 1,189 chapters.
 2. Split, before anything is trained: every 20th chapter in Bible order (the chapters whose
    0-based index over the whole Bible is 19, 39, 59, ...: 59 chapters, ~5% of the verses) is
    held out and written to heldout.txt; the other 1,130 chapters are the training text.
    calibration.txt holds 256 training-side verses picked with a seeded RNG (for quantization
    calibration; they are not held out). Both files: one verse a line; heldout.txt separates
    chapters with an empty line.
 3. Tokenizer: byte-level BPE (GPT-2's ByteLevel pre-tokenizer and decoder, no prefix space)
    trained by the `tokenizers` library on the training chapters only, 2,048 tokens of which id 0
    is `<|endoftext|>` (bos and eos; the post-processor puts it before every encoded text).
 4. Token stream: each chapter is encoded as `<|endoftext|>` + its verses joined by "\\n";
    the training chapters, concatenated, are the training stream (the held-out ones likewise).
 5. Model: transformers.LlamaForCausalLM (config below; untied LM head), trained from a seeded
    init with AdamW on batches of random 128-token windows of the training stream, linear warmup
    then cosine decay of the learning rate.
 6. Held-out perplexity: next-token cross-entropy over non-overlapping 128-token windows of the
    held-out stream (127 predictions in each full window; the last, partial window too), beside
    the uniform baseline (perplexity = vocabulary size) and a unigram baseline (token frequencies
    of the training stream). Written to metrics.json with the config, steps, seed and wall time.
 7. The Hugging Face checkpoint (config.json, model.safetensors, tokenizer files,
    generation_config.json) goes to --work, and `python -m infer.export` turns it into
    model.onnx + model.onnx.data beside this script (with config.json, generation_config.json
    and the tokenizer files).

  python3 models/kjv-tiny/train.py                         # everything; ~8-25 min on 2 CPU cores
  python3 models/kjv-tiny/train.py --tokenizer-only --out /tmp/t   # steps 1-3 only
  python3 models/kjv-tiny/train.py --steps 300 --out /tmp/a --no-export   # a short run

Run it from anywhere; it finds the repository's python/ directory itself for the export.
"""
import argparse
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

SEED = 1234
THREADS = 2
HELDOUT_EVERY = 20          # every 20th chapter is held out ...
HELDOUT_OFFSET = 19         # ... the ones with index % 20 == 19
N_CALIBRATION = 256
VOCAB = 2048
EOT = "<|endoftext|>"
SEQ = 128
BATCH = 32
STEPS = 1200
PEAK_LR = 3e-3
MIN_LR = 3e-4
WARMUP = 100
WEIGHT_DECAY = 0.1
GRAD_CLIP = 1.0
MODEL = dict(hidden_size=160, intermediate_size=480, num_hidden_layers=4, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=256, rope_theta=10000.0,
             rms_norm_eps=1e-5, tie_word_embeddings=False, hidden_act="silu")
# sha256 of `bible -f Gen1:1-Rev22:21` with bible-kjv 4.38 / bible-kjv-text 4.38
KJV_SHA256 = "cd45f0c9cedab8e4439bd6486c8952c77cc8b0ecc5d1f6ae3513f2039f47229d"
REF = re.compile(r"^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$")


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# 1-2. Text and split
# ---------------------------------------------------------------------------------------------

def read_kjv(path):
    if path:
        raw = open(path, encoding="utf-8").read()
    else:
        raw = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True, capture_output=True,
                             text=True).stdout
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    if digest != KJV_SHA256:
        log(f"warning: the KJV text's sha256 is {digest}, not that of bible-kjv-text 4.38; "
            "the model will not be the same")
    chapters = []  # [(ref "Ge1", [verse, ...])]
    for line in raw.splitlines():
        m = REF.match(line)
        if not m:
            raise SystemExit(f"unexpected line in the KJV text: {line[:80]!r}")
        book, chapter, _, text = m.groups()
        ref = f"{book}{chapter}"
        if not chapters or chapters[-1][0] != ref:
            chapters.append((ref, []))
        chapters[-1][1].append(" ".join(text.split()))
    return chapters, digest


def split(chapters):
    held = [c for i, c in enumerate(chapters) if i % HELDOUT_EVERY == HELDOUT_OFFSET]
    train = [c for i, c in enumerate(chapters) if i % HELDOUT_EVERY != HELDOUT_OFFSET]
    return train, held


def write_text_files(out, train, held):
    with open(os.path.join(out, "heldout.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n\n".join("\n".join(verses) for _, verses in held) + "\n")
    verses = [v for _, vs in train for v in vs]
    rng = random.Random(SEED)
    picked = sorted(rng.sample(range(len(verses)), N_CALIBRATION))
    with open(os.path.join(out, "calibration.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(verses[i] + "\n" for i in picked))


def read_heldout(out):
    text = open(os.path.join(out, "heldout.txt"), encoding="utf-8").read()
    return [c.split("\n") for c in text.rstrip("\n").split("\n\n")]


# ---------------------------------------------------------------------------------------------
# 3. Tokenizer
# ---------------------------------------------------------------------------------------------

def train_tokenizer(train_docs):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(train_docs, trainer=trainer)
    eot = tok.token_to_id(EOT)
    assert eot == 0 and tok.get_vocab_size() == VOCAB, (eot, tok.get_vocab_size())
    tok.post_processor = processors.TemplateProcessing(
        single=f"{EOT} $A", pair=f"{EOT} $A {EOT} $B", special_tokens=[(EOT, eot)])
    return tok


def save_tokenizer(tok, d):
    tok.save(os.path.join(d, "tokenizer.json"))
    config = {"bos_token": EOT, "eos_token": EOT, "model_max_length": MODEL["max_position_embeddings"],
              "clean_up_tokenization_spaces": False, "tokenizer_class": "PreTrainedTokenizerFast"}
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 0, "eos_token_id": 0}, f, indent=2)
        f.write("\n")


def stream(tok, docs):
    ids = []
    for enc in tok.encode_batch(docs, add_special_tokens=False):
        ids.append(0)
        ids.extend(enc.ids)
    return ids


# ---------------------------------------------------------------------------------------------
# 5-6. Model, training, evaluation
# ---------------------------------------------------------------------------------------------

def lr_at(step, steps):
    if step < WARMUP:
        return PEAK_LR * (step + 1) / WARMUP
    t = (step - WARMUP) / max(1, steps - WARMUP)
    return MIN_LR + 0.5 * (PEAK_LR - MIN_LR) * (1 + math.cos(math.pi * t))


def evaluate(torch, model, ids):
    """Mean next-token NLL (nats) over non-overlapping SEQ-token windows, and the count."""
    F = torch.nn.functional
    model.eval()
    total, count = 0.0, 0
    windows = [ids[i:i + SEQ] for i in range(0, len(ids), SEQ)]
    windows = [w for w in windows if len(w) >= 2]
    with torch.no_grad():
        full = [w for w in windows if len(w) == SEQ]
        rest = [w for w in windows if len(w) < SEQ]
        for i in range(0, len(full), 64):
            x = torch.tensor(full[i:i + 64])
            logits = model(input_ids=x).logits.float()
            nll = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                  reduction="sum")
            total += nll.item()
            count += x.shape[0] * (SEQ - 1)
        for w in rest:
            x = torch.tensor([w])
            logits = model(input_ids=x).logits.float()
            total += F.cross_entropy(logits[0, :-1], x[0, 1:], reduction="sum").item()
            count += len(w) - 1
    model.train()
    return total / count, count


def unigram_nll(train_ids, held_ids):
    counts = [1] * VOCAB  # add-one smoothing
    for t in train_ids:
        counts[t] += 1
    n = sum(counts)
    # the same predictions evaluate() scores: every token but each window's first
    targets = [t for i, t in enumerate(held_ids) if i % SEQ != 0]
    return sum(-math.log(counts[t] / n) for t in targets) / len(targets)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the text files, metrics and export go "
                                                "(default: this script's directory)")
    ap.add_argument("--work", default="/tmp/kjv-tiny-checkpoint",
                    help="where the Hugging Face checkpoint goes (default %(default)s)")
    ap.add_argument("--kjv-text", help="read the KJV text from this file (the output of "
                                       "`bible -f Gen1:1-Rev22:21`) instead of running bible")
    ap.add_argument("--steps", type=int, default=STEPS, help="training steps (default %(default)s)")
    ap.add_argument("--tokenizer-only", action="store_true", help="stop after the tokenizer")
    ap.add_argument("--no-export", action="store_true", help="skip python -m infer.export")
    args = ap.parse_args()
    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)

    chapters, digest = read_kjv(args.kjv_text)
    train, held = split(chapters)
    write_text_files(args.out, train, held)
    held_docs = ["\n".join(c) for c in read_heldout(args.out)]
    train_docs = ["\n".join(vs) for _, vs in train]
    log(f"KJV: {len(chapters)} chapters, {sum(len(v) for _, v in chapters)} verses; "
        f"train {len(train)} chapters, held out {len(held_docs)} "
        f"({sum(len(d) for d in held_docs)} of {sum(len(d) for d in held_docs + train_docs)} characters)")

    tok = train_tokenizer(train_docs)
    save_tokenizer(tok, args.work)
    tok_sha = hashlib.sha256(open(os.path.join(args.work, "tokenizer.json"), "rb").read()).hexdigest()
    log(f"tokenizer: {tok.get_vocab_size()} tokens, tokenizer.json sha256 {tok_sha}")
    if args.tokenizer_only:
        save_tokenizer(tok, args.out)
        return

    import torch
    import transformers
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM
    torch.set_num_threads(THREADS)
    torch.use_deterministic_algorithms(True)
    random.seed(SEED)
    torch.manual_seed(SEED)

    hf_tok = AutoTokenizer.from_pretrained(args.work)
    probe = "In the beginning God created the heaven and the earth."
    assert hf_tok(probe)["input_ids"] == [0] + tok.encode(probe, add_special_tokens=False).ids
    assert hf_tok.decode(hf_tok(probe)["input_ids"], skip_special_tokens=True) == probe

    train_ids = stream(tok, train_docs)
    held_ids = stream(tok, held_docs)
    chars_held = sum(len(d.encode("utf-8")) for d in held_docs)
    log(f"tokens: train {len(train_ids)}, held out {len(held_ids)} "
        f"({chars_held / len(held_ids):.2f} bytes per token)")

    config = LlamaConfig(vocab_size=VOCAB, bos_token_id=0, eos_token_id=0, **MODEL)
    model = LlamaForCausalLM(config)
    nparams = sum(p.numel() for p in model.parameters())
    log(f"model: {nparams} parameters, {MODEL}")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=PEAK_LR, betas=(0.9, 0.95), eps=1e-8)
    data = torch.tensor(train_ids, dtype=torch.long)
    gen = torch.Generator().manual_seed(SEED)
    F = torch.nn.functional
    losses = []
    t_train = time.time()
    model.train()
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps)
        starts = torch.randint(0, len(train_ids) - SEQ - 1, (BATCH,), generator=gen)
        batch = torch.stack([data[s:s + SEQ + 1] for s in starts.tolist()])
        logits = model(input_ids=batch[:, :-1]).logits
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
        opt.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            el = time.time() - t_train
            log(f"step {step:5d}  loss {loss.item():.4f}  lr {lr_at(step, args.steps):.2e}  "
                f"{el:6.0f} s ({el / (step + 1):.3f} s/step)")
    train_s = time.time() - t_train

    held_nll, held_n = evaluate(torch, model, held_ids)
    train_nll, _ = evaluate(torch, model, train_ids[:len(held_ids)])
    uni = unigram_nll(train_ids, held_ids)
    log(f"held-out: {held_nll:.4f} nats/token, perplexity {math.exp(held_nll):.2f} over {held_n} "
        f"predictions (uniform {VOCAB}, unigram {math.exp(uni):.1f}); "
        f"train sample perplexity {math.exp(train_nll):.2f}")

    model.eval()
    model.generation_config = GenerationConfig(bos_token_id=0, eos_token_id=0, pad_token_id=0)
    prompt = "In the beginning"
    x = hf_tok(prompt, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**x, max_new_tokens=40, do_sample=False)
    sample = hf_tok.decode(out[0], skip_special_tokens=False)
    log(f"greedy sample: {sample!r}")

    model.save_pretrained(args.work)           # config.json, generation_config.json, safetensors
    save_tokenizer(tok, args.work)             # our generation_config.json (eos 0) over HF's
    model_sha = hashlib.sha256(open(os.path.join(args.work, "model.safetensors"), "rb").read()).hexdigest()
    log(f"checkpoint: {args.work} (model.safetensors sha256 {model_sha})")

    metrics = {
        "data": {"source": "Debian bible-kjv-text 4.38 via `bible -f Gen1:1-Rev22:21`",
                 "text_sha256": digest, "chapters": len(chapters),
                 "heldout": f"chapters with 0-based index % {HELDOUT_EVERY} == {HELDOUT_OFFSET}",
                 "heldout_chapters": [r for r, _ in held],
                 "train_tokens": len(train_ids), "heldout_tokens": len(held_ids),
                 "heldout_bytes": chars_held},
        "tokenizer": {"type": "byte-level BPE (tokenizers)", "vocab_size": VOCAB, "special": EOT,
                      "tokenizer_json_sha256": tok_sha},
        "model": {"architecture": "LlamaForCausalLM", "parameters": nparams, "vocab_size": VOCAB,
                  **MODEL},
        "training": {"seed": SEED, "threads": THREADS, "steps": args.steps, "batch": BATCH, "seq": SEQ,
                     "tokens_seen": args.steps * BATCH * SEQ, "optimizer": "AdamW(0.9, 0.95)",
                     "peak_lr": PEAK_LR, "min_lr": MIN_LR, "warmup": WARMUP,
                     "weight_decay": WEIGHT_DECAY, "grad_clip": GRAD_CLIP,
                     "final_loss_mean_last_50": sum(losses[-50:]) / len(losses[-50:]),
                     "train_seconds": round(train_s, 1),
                     "model_safetensors_sha256": model_sha,
                     "torch": torch.__version__, "transformers": transformers.__version__},
        "eval": {"heldout_nll_nats_per_token": held_nll, "heldout_perplexity": math.exp(held_nll),
                 # approximate: mean nats/token x tokens per byte of held-out text
                 "heldout_bits_per_byte": held_nll / math.log(2) * len(held_ids) / chars_held,
                 "heldout_predictions": held_n, "uniform_perplexity": VOCAB,
                 "unigram_perplexity": math.exp(uni),
                 "train_sample_perplexity": math.exp(train_nll)},
        "sample_greedy": {"prompt": prompt, "max_new_tokens": 40, "text": sample},
    }
    if not args.no_export:
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        subprocess.run([sys.executable, "-m", "infer.export", args.work, "-o", args.out], check=True, env=env)
    metrics["wall_seconds"] = round(time.time() - t_start, 1)
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
        f.write("\n")
    log(f"done in {metrics['wall_seconds']} s")


if __name__ == "__main__":
    main()
