#!/usr/bin/env python3
"""Hostile input to infer-run on the cpu backend (issue 44, the runtime side). Compiles
MODEL.onnx (--target cpu) and checks that each case below ends with exactly one stderr line
(matched whole, as a regular expression where it names machine-dependent sizes) and the
stated exit status, within a timeout (a hang fails):

  files       --input NAME=<a directory>, a FIFO, /dev/zero; a FIFO as the artifact; an .npy
              of shape (2.5, 7): refused (once an uncaught std::ios_failure, hangs, a read
              without end, a shape read as (2, 7))
  flags       --prompt-ids " 1, 2" and "+1", --seed 2^64 and -1, --top-k 2^31 + 1, a repeated
              --input, --warmup-requests -1: refused (once taken, clamped or last-wins)
  memory      --kv-blocks 10^8, bench --requests 2^31 and --warmup-requests 10^9: refused,
              naming the flag and the limit (once std::bad_alloc or the OOM killer)
  stdout      info, generate, bench and tokenize with stdout on /dev/full: exit 1 (once 0)
  nan         an embedding row rewritten to NaN (checksums recomputed): the request whose
              prompt holds that token ends with finish_reason "error" and the reason, the other
              request of the same run gets exactly the tokens it gets from the intact artifact,
              and generate exits 1 naming the failed request (once: token 0 forever, exit 0)
  truncation  the artifact truncated, then rewritten, while generate runs (after load): the
              run ends normally with the intact artifact's tokens (once SIGBUS: the weights were
              read from the mapping at every step)

  check_hardening.py --infer-compile C --infer-run R --corrupt-artifact X --model M.onnx
                     --tokenizer-model T.onnx
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile

import numpy as np

BLOCK = 4
MAX_SEQ_LEN = 64
TIMEOUT = 60


def run(cmd, stdout=subprocess.PIPE):
    try:
        return subprocess.run([str(c) for c in cmd], stdout=stdout, stderr=subprocess.PIPE,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--infer-compile", required=True)
    ap.add_argument("--infer-run", required=True)
    ap.add_argument("--corrupt-artifact", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokenizer-model", required=True, help="a model with its tokenizer.json beside it")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before a case counts as a hang")
    a = ap.parse_args()
    TIMEOUT = a.timeout
    failures = []

    def expect(name, cmd, line, status=1, regex=False, **kwargs):
        """cmd must exit `status` with exactly one stderr line: `line` (or matching it)."""
        proc = run(cmd, **kwargs)
        if proc is None:
            failures.append(f"{name}: no answer within {TIMEOUT} s (a hang)")
            return
        got = proc.stderr.rstrip("\n")
        ok_line = re.fullmatch(line, got) if regex else got == line
        if proc.returncode != status or not ok_line or "\n" in got:
            failures.append(f"{name}: exit {proc.returncode} (expected {status}), stderr "
                            f"{got!r}, expected {'a match of ' if regex else ''}{line!r}")
        else:
            print(f"ok: {name}: {got}")

    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "model.infer")
        proc = run([a.infer_compile, a.model, "-o", artifact, "--target", "cpu",
                    "--kv-block-size", BLOCK, "--max-seq-len", MAX_SEQ_LEN])
        if proc is None or proc.returncode != 0:
            raise SystemExit(f"FAIL: compile\n{proc and proc.stderr}")
        infer = [a.infer_run, artifact]
        generate = infer + ["generate", "--device", "cpu"]
        forward = infer + ["forward", "--device", "cpu", "--output", f"logits={tmp}/out.npy"]
        bench = infer + ["bench", "--device", "cpu"]

        # Files that are not regular files, and a header numpy would not write.
        directory = os.path.join(tmp, "dir.npy")
        os.mkdir(directory)
        fifo = os.path.join(tmp, "fifo.npy")
        os.mkfifo(fifo)
        expect("files: directory", forward + ["--input", f"input_ids={directory}"],
               f"error: --input input_ids: '{directory}' is not a regular file (a directory)")
        expect("files: FIFO", forward + ["--input", f"input_ids={fifo}"],
               f"error: --input input_ids: '{fifo}' is not a regular file (a FIFO)")
        expect("files: /dev/zero", forward + ["--input", "input_ids=/dev/zero"],
               "error: --input input_ids: '/dev/zero' is not a regular file (a character device)")
        expect("files: FIFO artifact", [a.infer_run, fifo, "info"],
               f"error: '{fifo}' is not a regular file (a FIFO)")
        fraction = os.path.join(tmp, "fraction.npy")
        header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2.5, 7), }"
        header += " " * (63 - (10 + len(header)) % 64) + "\n"
        with open(fraction, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
                    + np.arange(14, dtype=np.int64).tobytes())
        expect("files: shape (2.5, 7)", forward + ["--input", f"input_ids={fraction}"],
               f"error: --input input_ids: '{fraction}': malformed header: shape dim '2.5' is not "
               "a non-negative integer")

        # Flags taken without a word once.
        ids = os.path.join(tmp, "ids.npy")
        np.save(ids, np.array([[1, 2, 3]], dtype=np.int64))
        expect("flags: ' 1, 2'", generate + ["--prompt-ids", " 1, 2"],
               "error: --prompt-ids #1 ' 1, 2': ' 1' is not a token id (decimal digits only, no "
               "spaces or signs)")
        expect("flags: '+1'", generate + ["--prompt-ids", "+1"],
               "error: --prompt-ids #1 '+1': '+1' is not a token id (decimal digits only, no "
               "spaces or signs)")
        expect("flags: --seed 2^64", generate + ["--prompt-ids", "1", "--seed", str(2**64)],
               f"error: --seed {2**64} is not an integer in [0, {2**64 - 1}]")
        expect("flags: --seed -1", generate + ["--prompt-ids", "1", "--seed", "-1"],
               f"error: --seed -1 is not an integer in [0, {2**64 - 1}]")
        expect("flags: --top-k 2^31", generate + ["--prompt-ids", "1", "--top-k", str(2**31)],
               f"error: --top-k {2**31} is not an integer in [{-2**31}, {2**31 - 1}]")
        expect("flags: repeated --input", forward + ["--input", f"input_ids={ids}",
                                                      "--input", f"input_ids={fraction}"],
               f"error: --input names 'input_ids' twice ('{ids}' and '{fraction}'); give each once")
        expect("flags: --warmup-requests -1", bench + ["--requests", 1, "--input-len", 4,
                                                       "--output-len", 2, "--warmup-requests", -1],
               "error: --warmup-requests must be >= 0 (got -1)")

        # Sizes checked against the memory there is.
        size = r"[0-9.]+ (bytes|KiB|MiB|GiB|TiB|PiB)"
        expect("memory: --kv-blocks 10^8", generate + ["--prompt-ids", "1", "--kv-blocks", 10**8],
               rf"error: --kv-blocks 100000000: a KV cache of 100000000 blocks needs {size} of host "
               rf"memory \(2\.0 KiB a block\), more than the {size} available: at most [0-9]+ blocks fit",
               regex=True)
        expect("memory: --requests 2^31", bench + ["--requests", 2**31, "--input-len", 4, "--output-len", 2],
               rf"error: --requests 2147483648: the requests' prompts, token lists and timelines need "
               rf"{size} of host memory \({size} a request\), more than the {size} available: at most "
               r"[0-9]+ requests fit", regex=True)
        expect("memory: --warmup-requests 10^9", bench + ["--requests", 1, "--input-len", 4, "--output-len",
                                                           2, "--warmup-requests", 10**9],
               rf"error: --warmup-requests 1000000000: the requests' prompts, token lists and timelines "
               rf"need {size} of host memory \({size} a request\), more than the {size} available: at most "
               r"[0-9]+ requests fit", regex=True)

        # Output that cannot be written.
        full = "error: cannot write to standard output: No space left on device"
        with open("/dev/full", "w") as devfull:
            expect("stdout: info", infer + ["info"], full, stdout=devfull)
            expect("stdout: generate", generate + ["--prompt-ids", "1,2", "--max-new-tokens", 2], full,
                   stdout=devfull)
            expect("stdout: bench", bench + ["--requests", 1, "--input-len", 4, "--output-len", 2], full,
                   stdout=devfull)
            proc = subprocess.run([a.infer_run, "tokenize", "--tokenizer",
                                   os.path.dirname(a.tokenizer_model)], input='"hello"\n',
                                  stdout=devfull, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
            want = "error: Internal: cannot write to standard output: No space left on device"
            if proc.returncode != 1 or proc.stderr.rstrip("\n") != want:
                failures.append(f"stdout: tokenize: exit {proc.returncode}, stderr {proc.stderr!r}")
            else:
                print(f"ok: stdout: tokenize: {want}")

        # NaN: one embedding row made NaN; the request that reads it fails alone.
        def tokens(path, prompts, *extra, new=12):
            cmd = [a.infer_run, path, "generate", "--device", "cpu", "--greedy", "--max-new-tokens", new,
                   "--output", "json"]
            for p in prompts:
                cmd += ["--prompt-ids", ",".join(map(str, p))]
            return run(cmd + list(extra))

        clean = [5, 9, 17, 33]
        proc = tokens(artifact, [clean])
        expected = json.loads(proc.stdout)["requests"][0]["generated"]
        # A row no token of the clean request is or becomes.
        bad = next(t for t in range(100, 512) if t not in clean + expected)
        nan_artifact = os.path.join(tmp, "nan.infer")
        proc = run([a.corrupt_artifact, artifact, nan_artifact, "nan-row", bad])
        if proc is None or proc.returncode != 0:
            raise SystemExit(f"FAIL: corrupt-artifact nan-row\n{proc and proc.stderr}")
        proc = tokens(nan_artifact, [[3, bad, 7], clean])
        reason = "the model's logits are not finite (512 NaN, 0 +inf, 0 finite of 512; the first at token id 0)"
        want = f"error: --prompt-ids #1 (request 0) ended with an error: {reason}"
        try:
            result = json.loads(proc.stdout.strip().splitlines()[-1])["requests"]
        except (ValueError, IndexError, AttributeError):
            result = None
        if proc is None or result is None:
            failures.append(f"nan: no JSON: {proc and proc.stderr!r}")
        elif (proc.returncode != 1 or proc.stderr.rstrip("\n") != want
              or result[0]["finish_reason"] != "error" or result[0]["error"] != reason
              or result[0]["generated"] != [] or result[1]["generated"] != expected
              or result[1]["finish_reason"] != "length"):
            failures.append(f"nan: exit {proc.returncode}, stderr {proc.stderr!r}, requests {result}; "
                            f"expected request 1 to give {expected}")
        else:
            print(f"ok: nan: request 0 ended with 'error' ({reason}), request 1 gave its "
                  f"{len(expected)} tokens; {want}")
        all_nan = os.path.join(tmp, "all-nan.infer")
        proc = run([a.corrupt_artifact, artifact, all_nan, "nan-row", "all"])
        if proc is None or proc.returncode != 0:
            raise SystemExit(f"FAIL: corrupt-artifact nan-row all\n{proc and proc.stderr}")
        expect("nan: bench", [a.infer_run, all_nan, "bench", "--device", "cpu", "--requests", 4,
                              "--input-len", 8, "--output-len", 2],
               rf"error: request [0-3] cannot run: {re.escape(reason)}", regex=True)

        # Truncation (and then a rewrite) while generate runs: the cpu backend copied the
        # weights at load, so the run is unaffected.
        victim = os.path.join(tmp, "victim.infer")
        shutil.copy(artifact, victim)
        prompts = [[1 + i, 2 + i, 3 + i] for i in range(8)]
        reference = tokens(artifact, prompts, "--max-sequences", 1, new=48)
        reference = [r["generated"] for r in json.loads(reference.stdout)["requests"]]
        cmd = [a.infer_run, victim, "generate", "--device", "cpu", "--greedy", "--max-new-tokens", 48,
               "--max-sequences", 1]
        for p in prompts:
            cmd += ["--prompt-ids", ",".join(map(str, p))]
        child = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        first = child.stdout.readline()
        size = os.path.getsize(victim)
        os.truncate(victim, size // 2)
        with open(victim, "r+b") as f:
            f.seek(size // 4)
            f.write(b"\xff" * 4096)
        out, err = child.communicate(timeout=TIMEOUT)
        lines = (first + out).strip().splitlines()
        if child.returncode != 0 or not first.startswith("token:"):
            failures.append(f"truncation: exit {child.returncode} ({'a signal' if child.returncode < 0 else ''}), "
                            f"stderr {err!r}")
        else:
            got = [r["generated"] for r in json.loads(lines[-1])["requests"]]
            if got != reference:
                failures.append(f"truncation: tokens {got} != the intact artifact's {reference}")
            else:
                done_before = sum(1 for line in lines if line.startswith("token:")) - 1
                print(f"ok: truncation: truncated and rewritten after the first of "
                      f"{8 * 48} tokens, the run gave the intact artifact's tokens "
                      f"({done_before} tokens printed after it)")
        # Opened after the truncation: refused at open.
        expect("truncation: at open", [a.infer_run, victim, "info"],
               rf"error: {re.escape(victim)}: truncated: the file has {size // 2} bytes, its header says {size}",
               regex=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
