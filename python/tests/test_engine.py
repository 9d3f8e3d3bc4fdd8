#!/usr/bin/env python3
"""infer.Engine (the Python package over libinfer.so) on the cpu backend.

  python3 python/tests/test_engine.py --infer-compile BIN --infer-run BIN --library libinfer.so \
      --text-model models/tiny-llama/tiny-llama.onnx --ids-model test/models/tiny-llama.onnx \
      --greedy test/models/tiny-llama.greedy.json

References, each independent of the code under test: the PyTorch greedy golden
(ids), the `tokenizers` library (prompt ids, decoded text), Python's jinja2 (the
chat prompt, rendered as transformers renders it), and `infer-run generate`
(the same engine through the CLI: same prompt and seed, same tokens).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def compile_model(onnx, out, *extra):
    proc = subprocess.run([ARGS.infer_compile, onnx, "-o", out, "--target", "cpu", *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"infer-compile {onnx} failed: {proc.stderr}")


def cli_generate(artifact, *args):
    proc = subprocess.run([ARGS.infer_run, artifact, "generate", "--device", "cpu", "--output",
                           "json", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"infer-run generate {args} failed: {proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


class EngineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import infer
        from tokenizers import Tokenizer
        cls.infer = infer
        cls.tmp = tempfile.TemporaryDirectory()
        cls.text_artifact = os.path.join(cls.tmp.name, "text.infer")
        cls.ids_artifact = os.path.join(cls.tmp.name, "ids.infer")
        compile_model(ARGS.text_model, cls.text_artifact)
        compile_model(ARGS.ids_model, cls.ids_artifact)
        model_dir = os.path.dirname(os.path.abspath(ARGS.text_model))
        cls.oracle = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
            cls.config = json.load(f)
        cls.engine = infer.Engine(cls.text_artifact, device="cpu")
        cls.ids_engine = infer.Engine(cls.ids_artifact, device="cpu")

    @classmethod
    def tearDownClass(cls):
        cls.engine.close()
        cls.ids_engine.close()
        cls.tmp.cleanup()

    def test_greedy_matches_pytorch(self):
        with open(ARGS.greedy) as f:
            golden = json.load(f)
        expected = [step["token"] for step in golden["steps"]]
        out = self.ids_engine.generate([golden["prompt"]], max_tokens=len(expected))
        self.assertEqual(out[0].token_ids, expected)
        self.assertEqual(out[0].finish_reason, "length")
        self.assertIsNone(out[0].text)

    def test_prompt_ids_and_text_match_tokenizers(self):
        text = "The Licensor grants you a license, héllo 世界 🙂."
        self.assertEqual(self.engine.tokenize(text, add_special_tokens=True),
                         self.oracle.encode(text).ids)
        self.assertEqual(self.engine.tokenize(text), self.oracle.encode(text, add_special_tokens=False).ids)
        out = self.engine.generate(text, max_tokens=24, temperature=1.0, seed=3)[0]
        self.assertEqual(out.prompt_tokens, len(self.oracle.encode(text).ids))
        self.assertEqual(out.text, self.oracle.decode(out.token_ids, skip_special_tokens=True))
        self.assertEqual(self.engine.detokenize(out.token_ids), out.text)

    def test_same_tokens_as_infer_run(self):
        prompts = ["Copyright notice", "You may obtain a copy of the License at"]
        for sampling in ([], ["--temperature", "0.8", "--top-p", "0.9", "--seed", "5"],
                         ["--temperature", "1.2", "--top-k", "40", "--seed", "11"]):
            args = sum((["--prompt", p] for p in prompts), []) + sampling + ["--max-new-tokens", "12"]
            cli = cli_generate(self.text_artifact, *args)
            kwargs = {}
            if sampling:
                it = iter(sampling)
                flags = dict(zip(it, it))
                kwargs = {"temperature": float(flags["--temperature"]), "seed": int(flags["--seed"])}
                if "--top-p" in flags:
                    kwargs["top_p"] = float(flags["--top-p"])
                if "--top-k" in flags:
                    kwargs["top_k"] = int(flags["--top-k"])
            ours = self.engine.generate(prompts, max_tokens=12, **kwargs)
            self.assertEqual([c.token_ids for c in ours], [r["generated"] for r in cli["requests"]],
                             sampling)
            self.assertEqual([c.text for c in ours], [r["text"] for r in cli["requests"]])
            # Alone, a prompt gets the tokens it got in the batch (its sampler is keyed by index 0
            # there only for the first prompt).
            alone = self.engine.generate(prompts[:1], max_tokens=12, **kwargs)
            self.assertEqual(alone[0].token_ids, ours[0].token_ids)

    def test_stream_is_whole_utf8_and_equals_generate(self):
        # Random weights over a byte-level vocabulary sample lone bytes of multi-byte characters:
        # the stream must hold them back until they complete (or end as U+FFFD, as decode does).
        for seed in range(6):
            chunks = list(self.engine.stream("世界 🙂 é", max_tokens=40, temperature=1.5, seed=seed,
                                             ignore_eos=True))
            self.assertTrue(chunks[-1].finished)
            ids = [i for c in chunks for i in c.token_ids]
            text = "".join(c.text for c in chunks)
            self.assertEqual(text, self.oracle.decode(ids, skip_special_tokens=True), seed)
            full = self.engine.generate("世界 🙂 é", max_tokens=40, temperature=1.5, seed=seed,
                                        ignore_eos=True)[0]
            self.assertEqual((ids, text), (full.token_ids, full.text))

    def test_stop_string_spanning_tokens(self):
        free = self.engine.generate("The Work", max_tokens=40, temperature=1.0, seed=7, ignore_eos=True)[0]
        pieces = [self.oracle.decode([i]) for i in free.token_ids]
        # A stop string made of the end of one token's text and the start of the next's.
        for k in range(5, len(pieces) - 1):
            if len(pieces[k]) >= 2 and len(pieces[k + 1]) >= 2 and "\ufffd" not in pieces[k] + pieces[k + 1]:
                stop = pieces[k][-2:] + pieces[k + 1][:2]
                break
        else:
            self.skipTest("no two neighbouring multi-character tokens")
        out = self.engine.generate("The Work", max_tokens=40, temperature=1.0, seed=7,
                                   ignore_eos=True, stop=["never appears \x01", stop])[0]
        self.assertEqual(out.text, free.text[:free.text.index(stop)])
        self.assertEqual(out.finish_reason, "stop")
        self.assertEqual(out.stop_string, stop)
        self.assertLess(len(out.token_ids), len(free.token_ids))
        chunks = list(self.engine.stream("The Work", max_tokens=40, temperature=1.0, seed=7,
                                         ignore_eos=True, stop=stop))
        self.assertEqual("".join(c.text for c in chunks), out.text)

    def test_chat_template_matches_jinja2(self):
        import jinja2.sandbox
        messages = [{"role": "system", "content": "Be brief. "},
                    {"role": "user", "content": "  What is the License?\n"}]
        env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        expected = env.from_string(self.config["chat_template"]).render(
            messages=messages, add_generation_prompt=True, bos_token=self.config["bos_token"],
            eos_token=self.config["eos_token"])
        self.assertEqual(self.engine.apply_chat_template(messages), expected)
        out = self.engine.chat(messages, max_tokens=8)
        self.assertEqual(out.prompt_tokens, len(self.oracle.encode(expected, add_special_tokens=False).ids))

    def test_cancelled_stream_leaves_engine_clean(self):
        reference = self.engine.generate("Licensor", max_tokens=10, temperature=0.9, seed=2)[0]
        for chunk in self.engine.stream("Licensor", max_tokens=30, ignore_eos=True):
            break
        again = self.engine.generate("Licensor", max_tokens=10, temperature=0.9, seed=2)[0]
        self.assertEqual(again.token_ids, reference.token_ids)

    def test_errors(self):
        InferError = self.infer.InferError
        cases = [
            (lambda: self.infer.Engine(os.path.join(self.tmp.name, "missing.infer"), device="cpu"),
             "cannot open"),
            (lambda: self.engine.generate([[1, 2, 100000]]), "outside the vocabulary"),
            (lambda: self.engine.generate("hi", max_tokens=0), "at least 1"),
            (lambda: self.engine.generate("hi", temperature=-1), "--temperature"),
            (lambda: self.ids_engine.generate("text needs a tokenizer"), "no tokenizer"),
            (lambda: self.ids_engine.generate([[1, 2]], stop="x"), "stop strings need a tokenizer"),
            (lambda: self.ids_engine.tokenize("x"), "no tokenizer"),
            (lambda: self.engine.detokenize([100000]), "100000"),
            (lambda: self.engine.generate([[]]), "at least one"),
        ]
        for call, message in cases:
            with self.assertRaises((InferError, ValueError)) as caught:
                call()
            self.assertIn(message, str(caught.exception))
        # The engine still serves after every refusal.
        self.assertEqual(len(self.engine.generate("ok", max_tokens=2)[0].token_ids), 2)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--infer-compile", required=True)
    parser.add_argument("--infer-run", required=True)
    parser.add_argument("--library", required=True, help="libinfer.so")
    parser.add_argument("--text-model", required=True, help="an .onnx with tokenizer files beside it")
    parser.add_argument("--ids-model", required=True, help="an .onnx without a tokenizer")
    parser.add_argument("--greedy", required=True, help="the ids model's greedy.json golden")
    ARGS, rest = parser.parse_known_args()
    os.environ["INFER_LIBRARY"] = ARGS.library
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    unittest.main(argv=[sys.argv[0], "-v"] + rest)


if __name__ == "__main__":
    main()
