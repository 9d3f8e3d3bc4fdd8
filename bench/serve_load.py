#!/usr/bin/env python3
"""A load generator for `infer-run serve`, measuring what vLLM's benchmark_serving measures.

  serve_load.py --base-url http://127.0.0.1:8000 --num-prompts 200 --request-rate 8 \\
                --input-len 128 --output-len 128 [--range-ratio 0.0] [--vocab 32000] \\
                [--seed 0] [--result-json out.json]

Requests arrive as a Poisson process of --request-rate a second (inf: all at once), each a
streamed /v1/completions of random token ids (lengths uniform in len x [1 - r, 1 + r]) with
max_tokens = its output length and ignore_eos, so every request generates exactly that many
tokens. `return_token_ids` makes the server send one event per token, so the token times are
exact: TTFT (send to first token), TPOT ((end - first token) / (tokens - 1)), ITL (every gap
between tokens) and end-to-end latency, with request throughput and input and output tok/s
over the whole run. Prints a summary and one JSON line (also to --result-json). Standard
library only: one thread per request in flight, in --processes processes.
"""
import argparse
import http.client
import json
import itertools
import math
import multiprocessing
import random
import sys
import threading
import time
import urllib.parse


def quantile(values, q):
    """Linear interpolation between order statistics (numpy's default); 0 when empty."""
    if not values:
        return 0.0
    values = sorted(values)
    at = q * (len(values) - 1)
    lo = int(at)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (at - lo)


def one_request(url, body, timeout):
    """Sends one streamed completion; returns its timeline, or an error string."""
    conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout)
    times, usage = [], None
    start = time.monotonic()
    try:
        conn.request("POST", "/v1/completions", body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        if response.status != 200:
            return {"error": f"HTTP {response.status}: {response.read()[:200]!r}"}
        buffer = b""
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                if event == b"data: [DONE]":
                    continue
                data = json.loads(event[len(b"data: "):])
                if "error" in data:
                    return {"error": data["error"]["message"]}
                now = time.monotonic()
                for choice in data.get("choices", []):
                    times.extend([now] * len(choice.get("token_ids", [])))
                usage = data.get("usage") or usage
    except (OSError, http.client.HTTPException, ValueError) as error:
        return {"error": repr(error)}
    finally:
        conn.close()
    return {"start": start, "times": times, "end": time.monotonic(), "usage": usage}


def send_share(share):
    """Sends one process's requests, each on its own thread at begin + its offset."""
    url, requests, offsets, begin, timeout = share
    results = [None] * len(requests)

    def send(i):
        results[i] = one_request(url, requests[i], timeout)

    threads = []
    for i, offset in enumerate(offsets):
        delay = begin + offset - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(target=send, args=(i,), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return results


def run(args):
    url = urllib.parse.urlparse(args.base_url)
    rng = random.Random(args.seed)

    def length(mean):
        return max(1, rng.randint(int(mean * (1 - args.range_ratio)),
                                  int(math.ceil(mean * (1 + args.range_ratio)))))

    requests = []
    for _ in range(args.num_prompts):
        prompt = [rng.randrange(args.min_id, args.vocab) for _ in range(length(args.input_len))]
        requests.append({"prompt": prompt, "max_tokens": length(args.output_len), "temperature": 0,
                         "ignore_eos": True, "stream": True, "return_token_ids": True,
                         "stream_options": {"include_usage": True}})
    if args.model:
        for body in requests:
            body["model"] = args.model
    gaps = [0.0] + [rng.expovariate(args.request_rate) if math.isfinite(args.request_rate) else 0.0
                    for _ in range(args.num_prompts - 1)]
    offsets = list(itertools.accumulate(gaps))

    # Request i goes to process i % P; every process sends its share at the shared schedule's
    # times (time.monotonic is one clock for all processes), so the arrivals stay one Poisson
    # process while P interpreters parse the streams.
    processes = min(args.processes, len(requests))
    begin = time.monotonic() + 0.2 * (processes > 1)
    shares = [(url, requests[p::processes], offsets[p::processes], begin, args.timeout)
              for p in range(processes)]
    if processes == 1:
        parts = [send_share(shares[0])]
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.map(send_share, shares)
    results = [None] * len(requests)
    for p, part in enumerate(parts):
        results[p::processes] = part
    duration = time.monotonic() - begin

    done = [r for r in results if "error" not in r]
    failed = [r["error"] for r in results if "error" in r]
    ttft, tpot, itl, e2e = [], [], [], []
    input_tokens = output_tokens = 0
    for r in done:
        times = r["times"]
        output_tokens += len(times)
        input_tokens += r["usage"]["prompt_tokens"] if r["usage"] else 0
        if times:
            ttft.append((times[0] - r["start"]) * 1e3)
        if len(times) > 1:
            tpot.append((times[-1] - times[0]) / (len(times) - 1) * 1e3)
            itl.extend((b - a) * 1e3 for a, b in zip(times, times[1:]))
        e2e.append((r["end"] - r["start"]) * 1e3)
    summary = {
        "request_rate": args.request_rate if math.isfinite(args.request_rate) else "inf",
        "num_prompts": args.num_prompts, "completed": len(done), "failed": len(failed),
        "duration_s": round(duration, 4),
        "request_throughput": round(len(done) / duration, 4),
        "input_tokens": input_tokens, "output_tokens": output_tokens,
        "input_tok_s": round(input_tokens / duration, 3),
        "output_tok_s": round(output_tokens / duration, 3),
    }
    for name, values in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2e", e2e)):
        summary[f"{name}_ms_mean"] = round(sum(values) / len(values), 4) if values else 0.0
        summary[f"{name}_ms_p50"] = round(quantile(values, 0.5), 4)
        summary[f"{name}_ms_p99"] = round(quantile(values, 0.99), 4)
    summary["itl_count"] = len(itl)
    if failed:
        summary["first_errors"] = failed[:3]
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--base-url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", help="the served model's name (default: none sent)")
    ap.add_argument("--num-prompts", type=int, default=100)
    ap.add_argument("--request-rate", type=float, default=float("inf"),
                    help="requests a second, Poisson arrivals (default inf: all at once)")
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--range-ratio", type=float, default=0.0,
                    help="lengths uniform in len x [1 - r, 1 + r] (default 0: fixed)")
    ap.add_argument("--vocab", type=int, default=32000, help="prompt ids are below this")
    ap.add_argument("--min-id", type=int, default=4, help="prompt ids are at least this "
                    "(default 4: past the usual special tokens)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--processes", type=int, default=1,
                    help="client processes sharing the arrivals (default 1; more when one Python "
                         "process cannot parse the streams of a saturated server)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--result-json")
    args = ap.parse_args()
    if args.num_prompts < 1 or args.input_len < 1 or args.output_len < 1:
        ap.error("--num-prompts, --input-len and --output-len must be at least 1")
    if args.processes < 1:
        ap.error("--processes must be at least 1")
    if not args.request_rate > 0:
        ap.error("--request-rate must be positive (inf: all at once)")
    if not 0 <= args.range_ratio < 1 or not 0 <= args.min_id < args.vocab:
        ap.error("--range-ratio must be in [0, 1) and --min-id below --vocab")
    s = run(args)
    print(f"serve_load: {s['completed']} of {s['num_prompts']} requests in {s['duration_s']} s "
          f"at {s['request_rate']} requests/s ({s['failed']} failed)")
    print(f"  {s['request_throughput']} requests/s, {s['output_tok_s']} output tok/s, "
          f"{s['input_tok_s']} input tok/s")
    for name in ("ttft", "tpot", "itl", "e2e"):
        print(f"  {name.upper():4} mean {s[name + '_ms_mean']:.3f} ms, p50 {s[name + '_ms_p50']:.3f} "
              f"ms, p99 {s[name + '_ms_p99']:.3f} ms")
    print(json.dumps(s))
    if args.result_json:
        with open(args.result_json, "w") as f:
            json.dump(s, f, indent=1)
    return 1 if s["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
