"""Starts and stops `infer-run MODEL serve` for the server tests, and speaks raw HTTP.

Each test starts its own server on 127.0.0.1 with --port 0 (the server picks a free port and
prints it) on the cpu backend, and stops it with SIGTERM, expecting exit 0.
"""
import http.client
import json
import os
import re
import select
import signal
import subprocess
import time

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)
    return ok


def finish():
    """Exit status of the test: 1 when any check failed."""
    if FAILURES:
        print(f"{len(FAILURES)} checks failed:")
        for what in FAILURES:
            print("  " + what)
        return 1
    print("all checks passed")
    return 0


class Server:
    def __init__(self, infer_run, artifact, *args, device="cpu"):
        cmd = [infer_run, artifact, "serve", "--port", "0", "--device", device, *map(str, args)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline().decode() if ready else ""
        match = re.search(r"listening on http://([\d.]+):(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"serve did not start: {line!r} {self.proc.stderr.read()!r}")
        self.host, self.port = match.group(1), int(match.group(2))
        self.base = f"http://{self.host}:{self.port}"

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers, body bytes) of one request on a fresh connection."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def post(self, path, body, **kw):
        status, headers, data = self.request("POST", path, body, **kw)
        return status, headers, json.loads(data)

    def metrics(self):
        """/metrics as {name or name{labels}: value}."""
        status, _, data = self.request("GET", "/metrics")
        out = {}
        for line in data.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=60):
        """SIGTERM; the exit status (None if it did not exit within `timeout`)."""
        if hasattr(self, "stderr"):
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.stderr = self.proc.stderr.read().decode("utf-8", "replace")
            self.proc.stdout.close()
            self.proc.stderr.close()


def sse_events(response):
    """The `data:` payloads of a text/event-stream response, read as they come."""
    buffer = b""
    while True:
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(1)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            yield event
    if buffer:
        yield buffer


def wait_for(predicate, timeout=60, interval=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def generate(infer_run, artifact, *args, device="cpu"):
    """`infer-run generate --output json`'s only request: ids and text (the reference)."""
    proc = subprocess.run([infer_run, artifact, "generate", "--device", device, "--output", "json",
                           *map(str, args)], capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"generate {args}: {proc.stderr.decode()}")
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])["requests"][0]


def compile_model(infer_compile, model, directory):
    artifact = os.path.join(directory, "tl.infer")
    proc = subprocess.run([infer_compile, model, "-o", artifact, "--target", "cpu"],
                          capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"infer-compile: {proc.stderr.decode()}")
    return artifact
