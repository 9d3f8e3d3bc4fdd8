#!/usr/bin/env python3
"""`infer-run serve --device cuda` through the official `openai` client, on the GPU machine.

  check_serve_gpu.py --infer-run BIN --artifact MODEL.infer

MODEL.infer is a text artifact with a chat template (check_text_e2e.py writes a random-weight
TinyLlama-1.1B one). References: `infer-run generate --device cuda` for the same prompt, seed
and sampling (ids and text), and the non-streamed response for its stream. Checks:
  - streamed chat, greedy and seeded: the concatenated deltas equal the non-streamed message,
    which equals `generate --chat`; the first chunk carries the role, the last the finish
    reason and the usage;
  - completions, greedy and seeded: text and ids equal `generate`;
  - 32 concurrent streamed chats are all served in full, and /metrics shows every KV block
    free afterwards (how many equal their solo runs is printed, not asserted: on the GPU a
    batch's GEMMs may round differently from a single sequence's, and random weights give
    near-ties).
Exact equality needs the same kernels on both sides: the server and the CLI run the
artifact's cuBLASLt algorithms (the runtime never times them: docs/tuning.md) and the
server runs with --no-prefix-caching (a request whose prompt
prefix is cached prefills only its tail: other GEMM shapes, other bf16 rounding, and random
weights turn that into other tokens; session 52 saw both on an H100).
Exits 77 without the openai package or a GPU; 1 on any mismatch.
"""
import argparse
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from server_harness import Server, check, finish, generate, wait_for  # noqa: E402

QUESTION = "Write a short poem about the sea."
SAMPLINGS = [dict(temperature=0.0), dict(temperature=0.8, top_p=0.95, seed=3)]


def cli_sampling(s):
    flags = ["--temperature", s["temperature"]]
    if "top_p" in s:
        flags += ["--top-p", s["top_p"], "--seed", s["seed"]]
    return flags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--device", default="cuda", help="cuda (default); cpu to try the script here")
    a = ap.parse_args()
    try:
        import openai
    except ImportError as e:
        print(f"skipped: {e}")
        return 77
    n = a.max_tokens
    server = Server(a.infer_run, a.artifact, "--no-prefix-caching", device=a.device)
    try:
        client = openai.OpenAI(base_url=server.base + "/v1", api_key="unused", max_retries=0)
        model = client.models.list().data[0].id
        messages = [{"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": QUESTION}]
        for s in SAMPLINGS:
            ref = generate(a.infer_run, a.artifact, "--chat", "--system", messages[0]["content"],
                           "--prompt", QUESTION, "--max-new-tokens", n, "--ignore-eos",
                           *cli_sampling(s), device=a.device)
            whole = client.chat.completions.create(model=model, messages=messages, max_tokens=n,
                                                   extra_body={"ignore_eos": True,
                                                               "return_token_ids": True}, **s)
            stream = list(client.chat.completions.create(
                model=model, messages=messages, max_tokens=n, stream=True,
                stream_options={"include_usage": True}, extra_body={"ignore_eos": True}, **s))
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            print(f"chat {s}: {whole.usage.prompt_tokens} prompt tokens, {len(stream)} chunks, "
                  f"text {whole.choices[0].message.content[:100]!r}")
            check(whole.choices[0].message.content == ref["text"]
                  and (whole.choices[0].model_extra or {}).get("token_ids") == ref["generated"],
                  f"chat {s}: text and ids = generate --chat --device {a.device}")
            check(text == whole.choices[0].message.content, f"chat {s}: streamed = non-streamed")
            check(stream[0].choices[0].delta.role == "assistant", f"chat {s}: first chunk has the role")
            finishes = [c.choices[0].finish_reason for c in stream if c.choices]
            check(finishes[-1] == "length" and not any(finishes[:-1]), f"chat {s}: finish reasons")
            check(not stream[-1].choices and stream[-1].usage.completion_tokens == n
                  and stream[-1].usage.prompt_tokens == ref["prompt_tokens"], f"chat {s}: usage")

            prompt = "The capital of France is"
            ref = generate(a.infer_run, a.artifact, "--prompt", prompt, "--max-new-tokens", n,
                           "--ignore-eos", *cli_sampling(s), device=a.device)
            got = client.completions.create(model=model, prompt=prompt, max_tokens=n,
                                            extra_body={"ignore_eos": True, "return_token_ids": True},
                                            **s)
            check(got.choices[0].text == ref["text"]
                  and (got.choices[0].model_extra or {}).get("token_ids") == ref["generated"],
                  f"completion {s}: text and ids = generate --device {a.device}")

        # Concurrent streams batch together.
        questions = [f"Question {i}: what is {i} plus {i * 7}?" for i in range(32)]
        solo = {}
        for q in questions[:8]:
            solo[q] = client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": q}], max_tokens=32, temperature=0,
                extra_body={"ignore_eos": True}).choices[0].message.content
        streamed, tokens = {}, {}

        def one(q):
            chunks = list(client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": q}], max_tokens=32, temperature=0,
                stream=True, stream_options={"include_usage": True}, extra_body={"ignore_eos": True}))
            streamed[q] = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            tokens[q] = chunks[-1].usage.completion_tokens

        threads = [threading.Thread(target=one, args=(q,)) for q in questions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(len(streamed) == len(questions) and all(t == 32 for t in tokens.values()),
              f"{len(streamed)} of {len(questions)} streams served, 32 tokens each")
        same = sum(streamed.get(q) == solo[q] for q in solo)
        print(f"concurrent streams equal to their solo runs: {same} of {len(solo)} (not asserted)")
        free = wait_for(lambda: server.metrics().get("infer_kv_blocks_used", -1) == 0, timeout=20)
        check(free, f"KV blocks all free afterwards: {server.metrics().get('infer_kv_blocks_used')}")
    finally:
        rc = server.stop()
        check(rc == 0, f"serve exits 0 on SIGTERM (got {rc}): {server.stderr[-500:]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
