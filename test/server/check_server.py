#!/usr/bin/env python3
"""infer-run serve against the official `openai` client and raw HTTP, on the cpu backend.

  check_server.py --infer-compile BIN --infer-run BIN --model models/tiny-llama/tiny-llama.onnx
                  --case api|errors|overload|cancel|drain|load|soak [--seconds S]

References: `infer-run generate` (the same engine outside the server: ids and text for the
same prompt, seed and sampling), the `tokenizers` library (prompt token counts, decoded
text), the openai client's own parsing of the responses and streams, and prometheus_client's
parser of the metrics text format.

  api       completions and chat through the openai client, streamed and not, greedy and
            seeded, token-id prompts, stop strings, usage, raw SSE framing, the API key
  errors    a table of malformed requests, each answered with its status and an OpenAI error
            body; then a normal request still succeeds
  overload  more concurrent requests than --max-sequences + --max-queue: 503s for some, the
            others equal their solo runs
  cancel    --requests (200) streamed requests at once, half closed after 1-8 events: every
            stream served, the survivors equal their solo runs, the closed ones are counted
            cancelled and /metrics shows every KV block free; a non-streamed request whose
            client left is cancelled too, and a stream still waiting in the queue
  drain     SIGTERM: new requests get 503, running ones finish, exit 0; with a short
            --drain-timeout a long request is cut and the server still exits 0
  load      bench/serve_load.py (the load generator) at 20 requests/s, in one process and in
            two: its request and token counts equal the server's /metrics, its latencies are
            ordered
  soak      --seconds of mixed traffic from 6 clients (completions, chat, streams, closed
            streams, token ids, bad requests): every answer as expected, and the server's
            resident memory does not grow after the first 40%

Exit 77 (skipped) only when the openai, prometheus_client or tokenizers package is not
installed.
"""
import argparse
import json
import os
import random
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_harness import (Server, check, compile_model, finish, generate, sse_events,  # noqa: E402
                            wait_for)

PROMPT = "The Licensor grants a license — héllo 世界 🙂"


def completion_ids(choice):
    return (choice.model_extra or {}).get("token_ids")


def case_api(a, art, oracle):
    import openai
    server = Server(a.infer_run, art)
    try:
        client = openai.OpenAI(base_url=server.base + "/v1", api_key="unused", max_retries=0)
        models = client.models.list().data
        check([m.id for m in models] == ["tl"], f"/v1/models lists the artifact's name: {models}")
        model = models[0].id

        # Greedy text prompt = infer-run generate: ids, text, usage, the oracle's decode.
        ref = generate(a.infer_run, art, "--prompt", PROMPT, "--max-new-tokens", 24, "--ignore-eos")
        got = client.completions.create(model=model, prompt=PROMPT, max_tokens=24, temperature=0,
                                        extra_body={"return_token_ids": True, "ignore_eos": True})
        choice = got.choices[0]
        check(got.object == "text_completion" and choice.finish_reason == "length",
              f"completion object and finish_reason: {got.object} {choice.finish_reason}")
        check(completion_ids(choice) == ref["generated"], "greedy completion ids = generate's")
        check(choice.text == ref["text"] == oracle.decode(ref["generated"], skip_special_tokens=True),
              "greedy completion text = generate's = the tokenizers decode")
        prompt_tokens = len(oracle.encode(PROMPT).ids)
        check(got.usage.prompt_tokens == prompt_tokens and got.usage.completion_tokens == 24
              and got.usage.total_tokens == prompt_tokens + 24,
              f"usage counts the oracle's prompt tokens and the completion: {got.usage}")
        check((got.model_extra or {}).get("prompt_token_ids") == oracle.encode(PROMPT).ids,
              "return_token_ids gives the prompt's ids as tokenizers encodes them")

        # A token-id prompt = generate --prompt-ids.
        ids = [5, 77, 300, 12, 9]
        ref_ids = generate(a.infer_run, art, "--prompt-ids", ",".join(map(str, ids)),
                           "--max-new-tokens", 16, "--ignore-eos")
        got = client.completions.create(model=model, prompt=ids, max_tokens=16, temperature=0,
                                        extra_body={"return_token_ids": True, "ignore_eos": True})
        check(completion_ids(got.choices[0]) == ref_ids["generated"]
              and got.choices[0].text == ref_ids["text"], "token-id prompt = generate --prompt-ids")

        # Seeded sampling, streamed and not, = generate with the same seed and parameters.
        sample = dict(temperature=0.9, top_p=0.95, seed=7, max_tokens=32)
        ref_s = generate(a.infer_run, art, "--prompt", PROMPT, "--max-new-tokens", 32, "--temperature",
                         0.9, "--top-p", 0.95, "--top-k", 40, "--seed", 7, "--ignore-eos")
        extra = {"top_k": 40, "ignore_eos": True}
        whole = client.completions.create(model=model, prompt=PROMPT, extra_body=extra, **sample)
        chunks = list(client.completions.create(model=model, prompt=PROMPT, stream=True,
                                                stream_options={"include_usage": True},
                                                extra_body=extra, **sample))
        streamed = "".join(c.choices[0].text for c in chunks if c.choices)
        check(whole.choices[0].text == ref_s["text"], "seeded completion = generate with that seed")
        check(streamed == whole.choices[0].text, "streamed completion text = non-streamed text")
        check(all(c.object == "text_completion" for c in chunks), "chunks are text_completion objects")
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
        check(finishes[-1] == "length" and not any(finishes[:-1]),
              f"only the last choice chunk has a finish_reason: {finishes}")
        check(not chunks[-1].choices and chunks[-1].usage.completion_tokens == 32
              and chunks[-1].usage.prompt_tokens == prompt_tokens,
              "include_usage: a last chunk with no choices and the usage")

        # Chat = generate --chat (the template), streamed = not streamed.
        ref_c = generate(a.infer_run, art, "--chat", "--prompt", "What does the License grant?",
                         "--max-new-tokens", 20, "--ignore-eos")
        messages = [{"role": "user", "content": "What does the License grant?"}]
        chat = client.chat.completions.create(model=model, messages=messages, max_tokens=20,
                                              temperature=0, extra_body={"ignore_eos": True,
                                                                         "return_token_ids": True})
        check(chat.object == "chat.completion" and chat.choices[0].message.role == "assistant",
              "chat.completion with an assistant message")
        check(chat.choices[0].message.content == ref_c["text"]
              and completion_ids(chat.choices[0]) == ref_c["generated"],
              "greedy chat text and ids = generate --chat")
        check(chat.usage.prompt_tokens == ref_c["prompt_tokens"], "chat usage: the template's tokens")
        chunks = list(client.chat.completions.create(model=model, messages=messages, max_tokens=20,
                                                     temperature=0, stream=True,
                                                     extra_body={"ignore_eos": True}))
        check(all(c.object == "chat.completion.chunk" for c in chunks)
              and chunks[0].choices[0].delta.role == "assistant",
              "chat chunks: chat.completion.chunk, the first with the role")
        check("".join(c.choices[0].delta.content or "" for c in chunks) == ref_c["text"],
              "streamed chat text = generate --chat")
        check(chunks[-1].choices[0].finish_reason == "length" and chunks[-1].usage.completion_tokens == 20,
              "the last chat chunk: finish_reason and usage")

        # A stop string ends the text before it, finish_reason "stop".
        text = ref["text"]
        stop = next((text[k:k + 3] for k in range(6, len(text) - 3)
                     if "\ufffd" not in text[k:k + 3] and text.index(text[k:k + 3]) == k), None)
        if check(stop is not None, "found a stop string in the greedy text"):
            got = client.completions.create(model=model, prompt=PROMPT, max_tokens=24, temperature=0,
                                            stop=[stop, "never\x01"], extra_body={"ignore_eos": True})
            check(got.choices[0].text == text[:text.index(stop)]
                  and got.choices[0].finish_reason == "stop",
                  f"stop {stop!r}: the text ends before it, finish_reason stop")

        # The raw stream: `data: {json}` events, `data: [DONE]` last, text/event-stream.
        conn = __import__("http.client").client.HTTPConnection(server.host, server.port, timeout=60)
        conn.request("POST", "/v1/completions", body=json.dumps(
            {"model": model, "prompt": "Hi", "max_tokens": 8, "stream": True, "ignore_eos": True}))
        response = conn.getresponse()
        events = list(sse_events(response))
        conn.close()
        check(response.status == 200 and response.getheader("Content-Type", "").startswith(
            "text/event-stream"), "a stream is text/event-stream")
        check(all(e.startswith(b"data: ") for e in events) and events[-1] == b"data: [DONE]"
              and all(json.loads(e[6:])["object"] == "text_completion" for e in events[:-1]),
              f"SSE framing: data: {{json}} events then data: [DONE] ({len(events)} events)")
        status, _, body = server.request("GET", "/health")
        check(status == 200 and json.loads(body) == {"status": "ok"}, "/health")
        # /metrics as Prometheus' own Python client parses the text format.
        from prometheus_client.parser import text_string_to_metric_families
        families = {f.name: f for f in text_string_to_metric_families(
            server.request("GET", "/metrics")[2].decode())}
        types = {name: f.type for name, f in families.items()}
        check(types.get("infer_requests_running") == "gauge"
              and types.get("infer_generation_tokens") == "counter"
              and types.get("infer_kv_blocks_used") == "gauge"
              and types.get("infer_time_to_first_token_seconds") == "histogram"
              and types.get("infer_e2e_request_latency_seconds") == "histogram",
              f"prometheus_client parses /metrics with its types: {types}")
        ttft = families["infer_time_to_first_token_seconds"].samples
        buckets = [x.value for x in ttft if x.name.endswith("_bucket")]
        count = next(x.value for x in ttft if x.name.endswith("_count"))
        check(buckets == sorted(buckets) and buckets[-1] == count
              and ttft[len(buckets) - 1].labels["le"] == "+Inf",
              "the TTFT histogram's buckets are cumulative, +Inf last and equal to its count")
        metrics = server.metrics()
        check(metrics.get('infer_requests_finished_total{finish_reason="length"}', 0) >= 6
              and metrics["infer_kv_blocks_used"] == 0 and metrics["infer_kv_blocks_total"] > 0
              and metrics["infer_generation_tokens_total"] > 0
              and metrics["infer_time_to_first_token_seconds_count"] >= 6,
              "/metrics: finished requests, tokens, KV blocks, TTFT histogram")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")

    # The API key: /v1/ needs it, /health does not.
    server = Server(a.infer_run, art, "--api-key", "sesame")
    try:
        for key, what in ((None, "missing"), ("wrong", "wrong")):
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            status, _, body = server.post("/v1/completions", {"prompt": "x"}, headers=headers)
            check(status == 401 and body["error"]["code"] == "invalid_api_key",
                  f"a {what} API key: 401 with an OpenAI error")
        try:
            openai.OpenAI(base_url=server.base + "/v1", api_key="wrong", max_retries=0).models.list()
            check(False, "the openai client with a wrong key raises AuthenticationError")
        except openai.AuthenticationError:
            check(True, "the openai client with a wrong key raises AuthenticationError")
        client = openai.OpenAI(base_url=server.base + "/v1", api_key="sesame", max_retries=0)
        got = client.completions.create(model="tl", prompt=PROMPT, max_tokens=24, temperature=0,
                                        extra_body={"ignore_eos": True})
        check(got.choices[0].text == ref["text"], "the right API key: the request is served")
        check(server.request("GET", "/health")[0] == 200, "/health needs no key")
    finally:
        check(server.stop() == 0, "the server with --api-key exits 0 on SIGTERM")


def case_errors(a, art, oracle):
    server = Server(a.infer_run, art)
    C, H = "/v1/completions", "/v1/chat/completions"
    ok_chat = [{"role": "user", "content": "hi"}]
    table = [
        # (what, method, path, body (bytes, or JSON), status)
        ("not JSON", "POST", C, b"{not json", 400),
        ("an empty body", "POST", C, b"", 400),
        ("a JSON array", "POST", C, [], 400),
        ("a JSON number", "POST", C, b"123", 400),
        # nlohmann's out_of_range, not a parse_error: uncaught, it ended the server
        # (openai-request-fuzzer).
        ("a number past double's range", "POST", C, b'{"prompt": "x", "temperature": 1e999}', 400),
        ("a JSON string", "POST", C, b'"prompt"', 400),
        ("invalid UTF-8", "POST", C, b'{"prompt": "\xff\xfe"}', 400),
        ("no prompt", "POST", C, {}, 400),
        ("prompt null", "POST", C, {"prompt": None}, 400),
        ("prompt a number", "POST", C, {"prompt": 5}, 400),
        ("prompt an object", "POST", C, {"prompt": {"a": 1}}, 400),
        ("prompt []", "POST", C, {"prompt": []}, 400),
        ("two prompts", "POST", C, {"prompt": ["a", "b"]}, 400),
        ("ids mixed with text", "POST", C, {"prompt": [1, "a"]}, 400),
        ("a fractional id", "POST", C, {"prompt": [1.5]}, 400),
        ("a negative id", "POST", C, {"prompt": [-1]}, 400),
        ("an id outside the vocabulary", "POST", C, {"prompt": [99999]}, 400),
        ("an id beyond int64", "POST", C, b'{"prompt": [99999999999999999999]}', 400),
        ("two id prompts", "POST", C, {"prompt": [[1, 2], [3]]}, 400),
        ("a prompt longer than the context", "POST", C, {"prompt": [5] * 5000}, 400),
        ("max_tokens 0", "POST", C, {"prompt": "x", "max_tokens": 0}, 400),
        ("max_tokens -5", "POST", C, {"prompt": "x", "max_tokens": -5}, 400),
        ("max_tokens a string", "POST", C, {"prompt": "x", "max_tokens": "16"}, 400),
        ("max_tokens 1.5", "POST", C, {"prompt": "x", "max_tokens": 1.5}, 400),
        ("max_tokens true", "POST", C, {"prompt": "x", "max_tokens": True}, 400),
        ("max_tokens beyond the context", "POST", C, {"prompt": "x", "max_tokens": 5000}, 400),
        ("max_tokens beyond int32", "POST", C, {"prompt": "x", "max_tokens": 2 ** 40}, 400),
        ("temperature a string", "POST", C, {"prompt": "x", "temperature": "hot"}, 400),
        ("temperature -1", "POST", C, {"prompt": "x", "temperature": -1}, 400),
        ("temperature 3", "POST", C, {"prompt": "x", "temperature": 3}, 400),
        ("top_p 0", "POST", C, {"prompt": "x", "top_p": 0}, 400),
        ("top_p 1.5", "POST", C, {"prompt": "x", "top_p": 1.5}, 400),
        ("top_k -2", "POST", C, {"prompt": "x", "top_k": -2}, 400),
        ("top_k 2.5", "POST", C, {"prompt": "x", "top_k": 2.5}, 400),
        ("seed a string", "POST", C, {"prompt": "x", "seed": "x"}, 400),
        ("n 2", "POST", C, {"prompt": "x", "n": 2}, 400),
        ("best_of 3", "POST", C, {"prompt": "x", "best_of": 3}, 400),
        ("stream a string", "POST", C, {"prompt": "x", "stream": "yes"}, 400),
        ("stream_options without stream", "POST", C,
         {"prompt": "x", "stream_options": {"include_usage": True}}, 400),
        ("stop a number", "POST", C, {"prompt": "x", "stop": 5}, 400),
        ("stop with a number", "POST", C, {"prompt": "x", "stop": ["a", 1]}, 400),
        ("five stop strings", "POST", C, {"prompt": "x", "stop": list("abcde")}, 400),
        ("model a number", "POST", C, {"prompt": "x", "model": 5}, 400),
        ("another model", "POST", C, {"prompt": "x", "model": "gpt-4"}, 404),
        ("echo", "POST", C, {"prompt": "x", "echo": True}, 400),
        ("logprobs", "POST", C, {"prompt": "x", "logprobs": 3}, 400),
        ("presence_penalty", "POST", C, {"prompt": "x", "presence_penalty": 1}, 400),
        ("logit_bias", "POST", C, {"prompt": "x", "logit_bias": {"5": 100}}, 400),
        ("suffix", "POST", C, {"prompt": "x", "suffix": "y"}, 400),
        ("ignore_eos a number", "POST", C, {"prompt": "x", "ignore_eos": 1}, 400),
        ("chat: no messages", "POST", H, {}, 400),
        ("chat: messages a string", "POST", H, {"messages": "hi"}, 400),
        ("chat: messages []", "POST", H, {"messages": []}, 400),
        ("chat: a message not an object", "POST", H, {"messages": [5]}, 400),
        ("chat: a message without a role", "POST", H, {"messages": [{"content": "x"}]}, 400),
        ("chat: content a number", "POST", H, {"messages": [{"role": "user", "content": 5}]}, 400),
        ("chat: an image part", "POST", H,
         {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400),
        ("chat: longer than the context", "POST", H,
         {"messages": [{"role": "user", "content": "the work " * 3000}]}, 400),
        ("chat: max_completion_tokens 0", "POST", H,
         {"messages": ok_chat, "max_completion_tokens": 0}, 400),
        ("GET on a POST route", "GET", C, None, 404),
        ("an unknown route", "POST", "/v1/embeddings", {"input": "x"}, 404),
        ("a body over 16 MiB", "POST", C, b"{" + b" " * (17 << 20) + b"}", 413),
    ]
    try:
        for what, method, path, body, status in table:
            got, headers, data = server.request(method, path, body)
            try:
                error = json.loads(data)["error"]
                shaped = (isinstance(error["message"], str) and error["message"]
                          and isinstance(error["type"], str) and "param" in error and "code" in error)
            except (ValueError, KeyError, TypeError):
                shaped = False
            check(got == status and shaped and headers.get("Content-Type") == "application/json",
                  f"{what}: {status} with an OpenAI error body (got {got} {data[:160]!r})")
        check(len(table) >= 30, f"{len(table)} malformed requests")
        status, _, body = server.post(C, {"prompt": "x", "max_tokens": 5000})
        check(body["error"]["param"] == "max_tokens" and body["error"]["code"] == "context_length_exceeded",
              "max_tokens beyond the context names the field and context_length_exceeded")
        check(server.alive(), "the server is still running")
        ref = generate(a.infer_run, art, "--prompt", PROMPT, "--max-new-tokens", 8, "--ignore-eos")
        status, _, body = server.post(C, {"prompt": PROMPT, "max_tokens": 8, "temperature": 0,
                                          "ignore_eos": True})
        check(status == 200 and body["choices"][0]["text"] == ref["text"],
              "after them a normal request gets generate's text")
        check(server.metrics()["infer_kv_blocks_used"] == 0, "no KV block is held")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")


def sampled_body(seed, max_tokens, stream=False):
    return {"prompt": f"Request {seed}: {PROMPT}", "max_tokens": max_tokens, "temperature": 0.8,
            "seed": seed, "ignore_eos": True, "stream": stream}


def case_overload(a, art, oracle):
    server = Server(a.infer_run, art, "--max-sequences", 2, "--max-queue", 2)
    try:
        results = {}

        def send(i):
            results[i] = server.post("/v1/completions", sampled_body(i, 96))

        threads = [threading.Thread(target=send, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rejected = [i for i, r in results.items() if r[0] == 503]
        served = [i for i, r in results.items() if r[0] == 200]
        check(len(rejected) + len(served) == 16, f"every answer is 200 or 503: "
              f"{sorted((i, r[0]) for i, r in results.items())}")
        check(len(rejected) >= 1 and len(served) >= 2,
              f"16 at once over 2 running + 2 waiting: {len(served)} served, {len(rejected)} refused")
        check(all(results[i][2]["error"]["code"] == "queue_full" for i in rejected),
              "each 503 says queue_full in an OpenAI error body")
        for i in served:
            status, _, solo = server.post("/v1/completions", sampled_body(i, 96))
            check(results[i][2]["choices"][0]["text"] == solo["choices"][0]["text"]
                  and results[i][2]["usage"]["completion_tokens"] == 96,
                  f"request {i} under load = its solo run")
        metrics = server.metrics()
        check(metrics.get('infer_requests_rejected_total{code="queue_full"}') == len(rejected),
              "/metrics counts the refusals")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")


def stream_request(server, body, close_after=None):
    """The streamed text, or None when closed after `close_after` events."""
    sock = socket.create_connection((server.host, server.port), timeout=120)
    data = json.dumps(body).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    import http.client
    response = http.client.HTTPResponse(sock)
    response.begin()
    text, events = "", 0
    for event in sse_events(response):
        if event == b"data: [DONE]":
            break
        text += json.loads(event[6:])["choices"][0]["text"]
        events += 1
        if close_after is not None and events >= close_after:
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            return None
    sock.close()
    return text


def case_cancel(a, art, oracle, requests=200, max_tokens=32):
    server = Server(a.infer_run, art)
    try:
        rng = random.Random(1)
        closing = {i: rng.randint(1, 8) for i in range(requests) if i % 2 == 0}
        texts = {}

        failed = {}

        def run(i):
            try:
                texts[i] = stream_request(server, sampled_body(i, max_tokens, stream=True),
                                          closing.get(i))
            except Exception as error:  # reported below
                failed[i] = repr(error)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(requests)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if not check(not failed, f"every stream was served ({len(failed)} failed: "
                     f"{list(failed.items())[:3]})"):
            return
        check(all(texts[i] is None for i in closing), "the closed streams were closed")
        drained = wait_for(lambda: (lambda m: m["infer_requests_running"] == 0
                                    and m["infer_requests_waiting"] == 0)(server.metrics()), 60)
        metrics = server.metrics()
        check(drained and metrics["infer_kv_blocks_used"] == 0,
              f"afterwards nothing runs and every KV block is free: "
              f"{metrics['infer_kv_blocks_used']} of {metrics['infer_kv_blocks_total']} used")
        cancelled = metrics.get('infer_requests_finished_total{finish_reason="cancelled"}', 0)
        done = metrics.get('infer_requests_finished_total{finish_reason="length"}', 0)
        check(cancelled >= 1 and cancelled + done == requests,
              f"closed streams were cancelled: {cancelled} cancelled, {done} ran to the end")
        mismatches = []
        for i in range(requests):
            if i in closing:
                continue
            status, _, solo = server.post("/v1/completions", sampled_body(i, max_tokens))
            if texts[i] != solo["choices"][0]["text"]:
                mismatches.append(i)
        check(not mismatches, f"{requests - len(closing)} survivors = their solo runs "
              f"(differ: {mismatches})")

        # A non-streamed request writes nothing until it ends; its client leaving cancels it too.
        before = server.metrics()
        sock = socket.create_connection((server.host, server.port), timeout=60)
        data = json.dumps(sampled_body(0, 4000)).encode()
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                     str(len(data)).encode() + b"\r\n\r\n" + data)
        wait_for(lambda: server.metrics()["infer_requests_running"] == 1, 30, 0.01)
        sock.close()
        key = 'infer_requests_finished_total{finish_reason="cancelled"}'
        ended = wait_for(lambda: server.metrics().get(key, 0) == before.get(key, 0) + 1, 30, 0.05)
        after = server.metrics()
        generated = after["infer_generation_tokens_total"] - before["infer_generation_tokens_total"]
        check(ended and generated < 4000 and after["infer_kv_blocks_used"] == 0,
              f"a non-streamed request whose client left is cancelled ({generated:.0f} of 4000 "
              f"tokens generated) and its KV blocks are free")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")

    # A stream still waiting in the queue (nothing written yet) is cancelled when its client
    # leaves, before it ever runs.
    server = Server(a.infer_run, art, "--max-sequences", 1)
    try:
        def raw(body):
            sock = socket.create_connection((server.host, server.port), timeout=60)
            data = json.dumps(body).encode()
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                         str(len(data)).encode() + b"\r\n\r\n" + data)
            return sock

        running = raw(sampled_body(0, 4000))
        check(wait_for(lambda: server.metrics()["infer_requests_running"] == 1, 30, 0.01),
              "one long request runs")
        queued = raw(sampled_body(1, 8, stream=True))
        check(wait_for(lambda: server.metrics()["infer_requests_waiting"] == 1, 30, 0.01),
              "a stream waits behind it (--max-sequences 1)")
        queued.close()
        key = 'infer_requests_finished_total{finish_reason="cancelled"}'
        cancelled = wait_for(lambda: server.metrics().get(key, 0) == 1, 30, 0.05)
        metrics = server.metrics()
        check(cancelled and metrics["infer_requests_waiting"] == 0
              and metrics["infer_requests_running"] == 1,
              f"its client leaving cancels the waiting stream while the other still runs "
              f"({metrics.get(key, 0):.0f} cancelled, {metrics['infer_requests_waiting']:.0f} "
              f"waiting, {metrics['infer_requests_running']:.0f} running)")
        running.close()
        check(wait_for(lambda: server.metrics().get(key, 0) == 2
                       and server.metrics()["infer_kv_blocks_used"] == 0, 30, 0.05),
              "then the long one is cancelled too and every KV block is free")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")


def case_drain(a, art, oracle):
    import signal
    server = Server(a.infer_run, art, "--drain-timeout", 60)
    try:
        streams, started = {}, threading.Semaphore(0)

        def run(i):
            import http.client
            conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
            conn.request("POST", "/v1/completions", body=json.dumps(sampled_body(i, 160, True)))
            response = conn.getresponse()
            events = []
            for event in sse_events(response):
                events.append(event)
                if len(events) == 1:
                    started.release()
            streams[i] = events

        threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for _ in threads:
            started.acquire()
        server.proc.send_signal(signal.SIGTERM)
        check(wait_for(lambda: server.request("GET", "/health")[0] == 503, 10),
              "after SIGTERM /health answers 503")
        status, _, body = server.post("/v1/completions", {"prompt": "x"})
        check(status == 503 and body["error"]["code"] == "shutting_down",
              "after SIGTERM a new request gets 503 shutting_down")
        for t in threads:
            t.join()
        for i, events in streams.items():
            last = json.loads(events[-2][6:]) if len(events) >= 2 else {}
            check(events[-1] == b"data: [DONE]" and last.get("usage", {}).get("completion_tokens") == 160,
                  f"running request {i} finished all its 160 tokens")
        check(server.stop(timeout=60) == 0, "then the server exits 0")
    finally:
        server.stop()

    # A drain timeout cuts a request that would run too long; the exit is still 0.
    server = Server(a.infer_run, art, "--drain-timeout", 1)
    try:
        import http.client
        conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
        conn.request("POST", "/v1/completions", body=json.dumps(sampled_body(1, 4000, True)))
        response = conn.getresponse()
        events = sse_events(response)
        next(events)
        start = time.time()
        server.proc.send_signal(signal.SIGTERM)
        rest = list(events)
        error = [json.loads(e[6:]) for e in rest if e.startswith(b"data: {\"error\"")]
        check(rest and rest[-1] == b"data: [DONE]" and error
              and error[0]["error"]["code"] == "shutting_down",
              "past --drain-timeout the stream ends with a shutting_down error event")
        code = server.stop(timeout=60)
        check(code == 0 and time.time() - start < 30,
              f"and the server exits 0 soon after the timeout (exit {code}, "
              f"{time.time() - start:.1f} s)")
    finally:
        server.stop()


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def case_soak(a, art, oracle):
    """Mixed traffic for --seconds; resident memory after warm-up must not grow."""
    server = Server(a.infer_run, art, "--max-sequences", 8, "--max-queue", 8)
    prompts = [f"{PROMPT} {i}: the work, the license and the grant." for i in range(16)]
    deadline = time.time() + a.seconds
    counts, errors, samples = {}, [], []
    lock = threading.Lock()

    def one(rng):
        kind = rng.choice(["completion", "stream", "chat", "chat-stream", "closed", "ids", "bad"])
        tokens = rng.randint(1, 40)
        body = {"prompt": rng.choice(prompts), "max_tokens": tokens, "temperature": 0.7,
                "seed": rng.randint(0, 1000), "ignore_eos": True}
        if kind == "bad":
            status, _, got = server.post("/v1/completions", dict(body, max_tokens=-1))
            return status == 400 and "error" in got
        if kind == "closed":
            return stream_request(server, dict(body, stream=True, max_tokens=40),
                                  rng.randint(1, 5)) is None
        if kind == "stream":
            text = stream_request(server, dict(body, stream=True))
            return text is not None
        path = "/v1/completions"
        if kind == "ids":
            body["prompt"] = [rng.randint(4, 500) for _ in range(rng.randint(1, 64))]
        if kind.startswith("chat"):
            path = "/v1/chat/completions"
            body["messages"] = [{"role": "user", "content": body.pop("prompt")}]
        if kind == "chat-stream":
            import http.client
            conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
            conn.request("POST", path, body=json.dumps(dict(body, stream=True)))
            events = list(sse_events(conn.getresponse()))
            conn.close()
            return events[-1] == b"data: [DONE]"
        status, _, got = server.post(path, body)
        return status in (200, 503) and (status == 503 or got["usage"]["completion_tokens"] == tokens)

    def client(seed):
        rng = random.Random(seed)
        while time.time() < deadline:
            try:
                ok = one(rng)
            except Exception as error:  # a dropped connection is a failure too
                ok = False
                errors.append(repr(error))
            with lock:
                counts[ok] = counts.get(ok, 0) + 1

    try:
        threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
        start = time.time()
        for t in threads:
            t.start()
        while time.time() < deadline:
            samples.append((time.time() - start, rss_kib(server.proc.pid)))
            time.sleep(1)
        for t in threads:
            t.join()
        check(counts.get(False, 0) == 0 and counts.get(True, 0) > 0,
              f"{counts.get(True, 0)} requests as expected, {counts.get(False, 0)} not "
              f"({errors[:3]})")
        warm = max(r for t, r in samples if t < a.seconds * 0.4)
        late = max(r for t, r in samples if t >= a.seconds * 0.4)
        check(late <= warm + 4096, f"resident memory after warm-up: {warm} KiB, then at most "
              f"{late} KiB (+{late - warm} KiB, allowed +4096)")
        check(wait_for(lambda: server.metrics()["infer_kv_blocks_used"] == 0, 30),
              "afterwards every KV block is free")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")


def case_load(a, art, oracle):
    """bench/serve_load.py's counts against the server's own /metrics."""
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                          "serve_load.py")
    server = Server(a.infer_run, art)
    try:
        n, input_len, output_len = 12, 16, 8
        for processes in (1, 2):
            before = server.metrics()
            proc = subprocess.run([sys.executable, script, "--base-url", server.base, "--model", "tl",
                                   "--num-prompts", str(n), "--request-rate", "20", "--input-len",
                                   str(input_len), "--output-len", str(output_len), "--vocab",
                                   str(oracle.get_vocab_size()), "--processes", str(processes)],
                                  capture_output=True, timeout=300)
            check(proc.returncode == 0, f"serve_load.py --processes {processes} exits 0 "
                  f"({proc.stderr.decode()[-300:]!r})")
            r = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            after = server.metrics()
            generated = after["infer_generation_tokens_total"] - before["infer_generation_tokens_total"]
            prompted = after["infer_prompt_tokens_total"] - before["infer_prompt_tokens_total"]
            check(r["completed"] == n and r["failed"] == 0 and r["output_tokens"] == n * output_len
                  == generated and r["input_tokens"] == n * input_len == prompted,
                  f"--processes {processes}: {n} requests, {n * output_len} output and "
                  f"{n * input_len} input tokens, as the server counted them ({generated:.0f}, "
                  f"{prompted:.0f}): {r}")
            check(r["itl_count"] == n * (output_len - 1), "one ITL per token after each first")
            check(0 < r["ttft_ms_p50"] <= r["ttft_ms_p99"] <= r["e2e_ms_p99"]
                  and 0 < r["itl_ms_p50"] <= r["itl_ms_p99"] and r["request_throughput"] > 0,
                  "TTFT p50 <= p99 <= end-to-end p99, ITL p50 <= p99")
    finally:
        check(server.stop() == 0, "the server exits 0 on SIGTERM")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--case", required=True, choices=["api", "errors", "overload", "cancel", "drain", "soak", "load"])
    ap.add_argument("--seconds", type=float, default=60, help="soak: how long the traffic runs")
    ap.add_argument("--requests", type=int, default=200, help="cancel: streamed requests")
    a = ap.parse_args()
    try:
        import openai  # noqa: F401
        import prometheus_client  # noqa: F401
        from tokenizers import Tokenizer
    except ImportError as error:
        print(f"skipped: {error} (scripts/setup.sh installs openai, prometheus_client and "
              "tokenizers)")
        return 77
    oracle = Tokenizer.from_file(os.path.join(os.path.dirname(os.path.abspath(a.model)),
                                              "tokenizer.json"))
    with tempfile.TemporaryDirectory() as tmp:
        art = compile_model(a.infer_compile, a.model, tmp)
        if a.case == "cancel":
            case_cancel(a, art, oracle, requests=a.requests)
        else:
            globals()["case_" + a.case](a, art, oracle)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
