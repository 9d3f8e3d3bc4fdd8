#!/usr/bin/env python3
"""Checks that every kernel's first statement waits for the previous kernel.

The cuda backend may launch any of its kernels with programmatic stream
serialization (INFER_PDL=1, docs/codegen.md "Launch overlap"): such a kernel
can start while the one before it still runs, so before it reads another
kernel's output or writes anything it must execute griddepcontrol.wait
(Common.cuh, waitForPreviousKernel; the GEMVs' prefetchWeightsThenWaitFor-
PreviousKernel, infer_gemv_rows' loadFirstUnitThenWaitForPreviousKernel). A
block that returned early without waiting would also let the kernel after it
overtake its predecessor. This script finds every __global__ function
definition in the given CUDA sources (the kernel headers, or `infer-run
M.infer info --cuda-source` output) and fails naming each one whose body does
not begin with that call. Declarations without an initializer before it
(`__shared__ float s[8];`, `uint4 r[8];`) touch no memory and are skipped.

  check_kernel_entries.py FILE...
"""
import re
import sys

WAIT = re.compile(r"(\w+::)*\w*[wW]aitForPreviousKernel\w*\s*(<[^;(]*>)?\s*\(")
# A declaration without an initializer: qualifiers, a type, a name, array sizes.
DECLARATION = re.compile(r"^(extern\s+)?(__shared__\s+)?(__align__\(\d+\)\s+)?"
                         r"[\w:]+(\s*<[^;=(]*>)?\s+\w+(\s*\[[^\]=;]*\])*\s*;$")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def kernels(text):
    """(name, first statement) of every __global__ definition in text."""
    for match in re.finditer(r"__global__", text):
        start = match.end()
        brace = text.find("{", start)
        semicolon = text.find(";", start)
        if brace < 0 or (0 <= semicolon < brace):
            continue  # a declaration or an explicit instantiation
        header = text[start:brace]
        names = re.findall(r"(\w+)\s*\(", header)
        name = names[-1] if names else "?"
        # skip __launch_bounds__(...) etc.: the kernel name is the last call-like token
        position = brace + 1
        while True:
            body_end = text.find(";", position)
            statement = text[position:body_end + 1].strip()
            if not DECLARATION.match(statement):
                break
            position = body_end + 1
        yield name, statement


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    checked, failures = 0, []
    for path in paths:
        text = strip_comments(open(path, encoding="utf-8").read())
        for name, first in kernels(text):
            checked += 1
            if not WAIT.match(first):
                failures.append(f"{path}: kernel {name} starts with '{first[:80]}', "
                                "not waitForPreviousKernel()")
    for failure in failures:
        print("FAIL:", failure)
    if checked == 0:
        print("FAIL: no kernel definitions found in", " ".join(paths))
        return 1
    print(f"{'FAIL' if failures else 'PASS'}: {checked - len(failures)} of {checked} kernels "
          "wait for the previous kernel first")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
