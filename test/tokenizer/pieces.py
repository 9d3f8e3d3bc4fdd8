"""The pieces of a normalizer and/or pre-tokenizer spec (tokenizer.json syntax) on each string,
from both sides: the `tokenizers` library (normalize_str, then pre_tokenize_str) and
`infer-tokenizer-tool pieces`. Shared by check_pieces.py, check_unicode.py and
gen_unicode_tables.py (the library side).
"""
import json
import os
import subprocess
import tempfile

from tokenizers import Tokenizer


def component_tokenizer(normalizer=None, pre_tokenizer=None):
    """The library's tokenizer with just these components and an empty BPE model."""
    document = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
                "post_processor": None, "decoder": None,
                "model": {"type": "BPE", "vocab": {}, "merges": []}}
    return Tokenizer.from_str(json.dumps(document))


def oracle_pieces(spec, strings):
    """The library's pieces of each string (an empty text has none)."""
    tokenizer = component_tokenizer(spec.get("normalizer"), spec.get("pre_tokenizer"))
    out = []
    for s in strings:
        text = tokenizer.normalizer.normalize_str(s) if tokenizer.normalizer else s
        if tokenizer.pre_tokenizer and text:
            out.append([p for p, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)])
        else:
            out.append([text] if text else [])
    return out


def infer_pieces(tool, spec, strings):
    """`tool pieces` on each string: (the pieces of each, None), or (None, its error) when it
    fails."""
    data = "".join(json.dumps(s) + "\n" for s in strings).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        proc = subprocess.run([tool, "pieces", path], input=data, capture_output=True)
    if proc.returncode != 0:
        return None, proc.stderr.decode().strip()
    return [json.loads(x) for x in proc.stdout.decode().split("\n") if x], None
