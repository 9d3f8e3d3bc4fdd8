#!/usr/bin/env python3
"""Text in and text out through infer-compile and infer-run on the cpu backend.

  check_text.py --infer-compile BIN --infer-run BIN --model models/tiny-llama/tiny-llama.onnx
                [--foreign-tokenizer DIR]

The model directory holds tokenizer.json, tokenizer_config.json (with a chat
template) and generation_config.json. References: the `tokenizers` library
(prompt ids, decoded text) and Python's jinja2 (the chat prompt, rendered as
transformers renders it). Checks the artifact's text info, streamed text
against the JSON output, chat prompts, stop strings that span tokens, stopping
at the model's eos ids, `infer-run tokenize` on an artifact, and that bad input
(an unsupported tokenizer, a template construct outside the Jinja subset,
invalid UTF-8, files that are not regular or lead outside the model's
directory, a tokenizer of another model) gets one clear line and exit 1.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def run(cmd, **kw):
    return subprocess.run([c if isinstance(c, bytes) else str(c) for c in cmd],
                          capture_output=True, timeout=120, **kw)


def refused(proc, text, what):
    """Exit 1 and exactly one line on stderr, containing `text`."""
    err = proc.stderr.decode("utf-8", "replace").strip()
    lines = [l for l in err.splitlines() if l.strip()]
    check(proc.returncode == 1 and len(lines) == 1 and text in err,
          f"{what}: exit {proc.returncode}, one line with {text!r} (got {err!r})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--foreign-tokenizer", help="a tokenizer directory of another (larger) model")
    a = ap.parse_args()
    import jinja2.sandbox
    from tokenizers import Tokenizer, models

    model_dir = os.path.dirname(os.path.abspath(a.model))
    oracle = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    config = json.load(open(os.path.join(model_dir, "tokenizer_config.json")))
    eos_ids = json.load(open(os.path.join(model_dir, "generation_config.json")))["eos_token_id"]
    tmp = tempfile.mkdtemp()
    try:
        art = os.path.join(tmp, "text.infer")
        proc = run([a.infer_compile, a.model, "-o", art, "--target", "cpu"])
        check(proc.returncode == 0, f"compile with the tokenizer beside the model: {proc.stderr[-300:]!r}")
        info = run([a.infer_run, art, "info"]).stdout.decode()
        check(f"tokenizer of {oracle.get_vocab_size()} tokens" in info and "chat template: " in info
              and f"stop token ids [{', '.join(map(str, eos_ids))}]" in info,
              "info shows the tokenizer, the stop ids and the template")

        def generate(*args, output="json"):
            proc = run([a.infer_run, art, "generate", "--device", "cpu", "--output", output, *args])
            if proc.returncode != 0:
                raise RuntimeError(f"generate {args}: {proc.stderr.decode()}")
            out = proc.stdout.decode("utf-8")
            return json.loads(out.strip().splitlines()[-1]) if output == "json" else out

        # Streamed text = the JSON's text = the oracle's decode of the ids; prompt ids as encode's.
        prompt = "The Licensor grants a license — héllo 世界 🙂"
        args = ["--prompt", prompt, "--max-new-tokens", "40", "--temperature", "1.3", "--seed", "4",
                "--ignore-eos"]
        result = generate(*args)["requests"][0]
        streamed = generate(*args, output="text")
        decoded = oracle.decode(result["generated"], skip_special_tokens=True)
        check(result["prompt_tokens"] == len(oracle.encode(prompt).ids),
              "--prompt is encoded as tokenizers encodes it (with BOS)")
        check(result["text"] == decoded, "the JSON text is the oracle's decode of the ids")
        check(streamed == decoded + "\n", "the streamed text is the same text")

        # Chat: the prompt is jinja2's rendering of the template, encoded without special tokens.
        env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        for system in ("", "Answer briefly."):
            messages = ([{"role": "system", "content": system}] if system else []) + \
                [{"role": "user", "content": "What does the License grant?"}]
            rendered = env.from_string(config["chat_template"]).render(
                messages=messages, add_generation_prompt=True, bos_token=config["bos_token"],
                eos_token=config["eos_token"])
            chat = generate("--chat", "--prompt", "What does the License grant?",
                            *(["--system", system] if system else []), "--max-new-tokens", "4")
            check(chat["requests"][0]["prompt_tokens"] ==
                  len(oracle.encode(rendered, add_special_tokens=False).ids),
                  f"--chat{' --system' if system else ''} prompt = jinja2's rendering")

        # A stop string spanning two tokens ends the text before it.
        free = generate("--prompt", "The Work", "--max-new-tokens", "48", "--temperature", "1.0",
                        "--seed", "9", "--ignore-eos")["requests"][0]
        pieces = [oracle.decode([i]) for i in free["generated"]]
        stop = next((pieces[k][-2:] + pieces[k + 1][:2] for k in range(4, len(pieces) - 1)
                     if len(pieces[k]) >= 2 and len(pieces[k + 1]) >= 2
                     and "\ufffd" not in pieces[k] + pieces[k + 1]), None)
        if stop is None:
            check(False, "found a stop string spanning two tokens")
        else:
            stop_args = ["--prompt", "The Work", "--max-new-tokens", "48", "--temperature", "1.0",
                         "--seed", "9", "--ignore-eos", "--stop", "never\x01", "--stop", stop]
            stopped = generate(*stop_args)["requests"][0]
            expected = free["text"][:free["text"].index(stop)]
            check(stopped["text"] == expected and stopped["finish_reason"] == "stop"
                  and stopped.get("stop_string") == stop,
                  f"--stop {stop!r} spanning tokens ends the text before it")
            check(generate(*stop_args, output="text") == expected + "\n",
                  "the streamed text stops there too")

        # The model's eos ids end a generation ("stop"), kept as the last id, not in the text.
        found = False
        for seed in range(40):
            sample = ["--prompt", "A", "--max-new-tokens", "64", "--temperature", "3", "--seed", str(seed)]
            free = generate(*sample, "--ignore-eos")["requests"][0]["generated"]
            first = next((i for i, t in enumerate(free) if t in eos_ids), None)
            if first is None:
                continue
            found = True
            ended = generate(*sample)["requests"][0]
            check(ended["generated"] == free[:first + 1] and ended["finish_reason"] == "stop"
                  and ended["finish_detail"] == "stop-token",
                  f"seed {seed}: generation ends at the eos id {free[first]} (step {first})")
            break
        check(found, "a seeded run samples an eos id within 64 tokens")

        # tokenize reads the tokenizer from the artifact.
        texts = ["Hello, world!", "  two  spaces\tand tab\n", "世界 🙂", "<s> special </s>"]
        proc = run([a.infer_run, "tokenize", "--tokenizer", art],
                   input="\n".join(json.dumps(t) for t in texts).encode())
        got = [json.loads(l) for l in proc.stdout.decode().splitlines()]
        check(proc.returncode == 0 and got == [oracle.encode(t, add_special_tokens=False).ids for t in texts],
              "tokenize --tokenizer ARTIFACT = tokenizers' ids")

        # Bad input: one clear line, exit 1.
        refused(run([a.infer_run, art, "generate", "--device", "cpu", b"--prompt", b"bad \xff\xfe bytes"]),
                "UTF-8", "invalid UTF-8 in --prompt")
        ids_art = os.path.join(tmp, "ids.infer")
        run([a.infer_compile, a.model, "-o", ids_art, "--target", "cpu", "--no-tokenizer"])
        refused(run([a.infer_run, ids_art, "generate", "--device", "cpu", "--prompt", "x"]),
                "no tokenizer", "--prompt on an artifact without a tokenizer")
        refused(run([a.infer_run, ids_art, "generate", "--device", "cpu", "--prompt-ids", "1,2",
                     "--stop", "x"]), "no tokenizer", "--stop on an artifact without a tokenizer")
        refused(run([a.infer_run, art, "generate", "--device", "cpu", "--prompt", "x", "--system", "s"]),
                "--chat", "--system without --chat")

        def model_dir_with(name, files):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            shutil.copy(a.model, d)
            for f, content in files.items():
                if isinstance(content, bytes):
                    open(os.path.join(d, f), "wb").write(content)
                elif content is not None:
                    shutil.copy(content, os.path.join(d, f))
            return os.path.join(d, os.path.basename(a.model))

        def compile_refused(onnx, text, what, *extra):
            refused(run([a.infer_compile, onnx, "-o", os.path.join(tmp, "x.infer"), "--target", "cpu",
                         *extra]), text, what)
            check(not os.path.exists(os.path.join(tmp, "x.infer")), f"{what}: no artifact written")

        tokenizer_json = os.path.join(model_dir, "tokenizer.json")
        no_template = model_dir_with("no-template", {"tokenizer.json": tokenizer_json})
        art2 = os.path.join(tmp, "no-template.infer")
        run([a.infer_compile, no_template, "-o", art2, "--target", "cpu"])
        refused(run([a.infer_run, art2, "generate", "--device", "cpu", "--chat", "--prompt", "x"]),
                "no chat template", "--chat on a model without a chat template")

        wordpiece = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
        wp_dir = os.path.join(tmp, "wordpiece-src")
        os.makedirs(wp_dir)
        wordpiece.save(os.path.join(wp_dir, "tokenizer.json"))
        compile_refused(model_dir_with("wordpiece", {"tokenizer.json": os.path.join(wp_dir, "tokenizer.json")}),
                        "WordPiece", "a tokenizer.json of an unsupported kind")
        bad_template = os.path.join(tmp, "bad.jinja")
        open(bad_template, "w").write("{% for m in messages %}{% include 'other.jinja' %}{% endfor %}")
        compile_refused(a.model, "include", "a chat template construct outside the subset",
                        "--chat-template", bad_template)
        compile_refused(model_dir_with("bad-json", {"tokenizer.json": tokenizer_json,
                                                    "tokenizer_config.json": b"{not json"}),
                        "tokenizer_config.json is not valid JSON", "a config that is not JSON")
        compile_refused(model_dir_with("bad-eos", {"tokenizer.json": tokenizer_json,
                                                   "generation_config.json": b'{"eos_token_id": 99999}'}),
                        "eos_token_id 99999", "an eos id outside the tokenizer")
        outside = model_dir_with("outside", {})
        os.symlink(tokenizer_json, os.path.join(os.path.dirname(outside), "tokenizer.json"))
        compile_refused(outside, "leads outside", "a tokenizer.json link leading out of the model's directory")
        fifo = model_dir_with("fifo", {})
        os.mkfifo(os.path.join(os.path.dirname(fifo), "tokenizer.json"))
        compile_refused(fifo, "not a regular file", "a FIFO as tokenizer.json (no hang)")
        compile_refused(a.model, "no tokenizer.json", "--tokenizer DIR without one",
                        "--tokenizer", tmp)
        if a.foreign_tokenizer:
            compile_refused(a.model, "not this model's tokenizer", "a tokenizer larger than the model's vocabulary",
                            "--tokenizer", a.foreign_tokenizer)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
