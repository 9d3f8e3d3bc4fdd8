"""infer.Engine: generation from a compiled artifact, over the C++ runtime's engine.

    import infer
    with infer.Engine("model.infer", device="cuda") as engine:
        out = engine.generate(["The capital of France is"], max_tokens=32, temperature=0.7, seed=1)
        print(out[0].text, out[0].token_ids, out[0].finish_reason)
        for chunk in engine.stream("Once upon a time", max_tokens=64):
            print(chunk.text, end="", flush=True)

Every call goes to libinfer.so (runtime/capi/infer.h): the same serving::Engine
that `infer-run generate` runs, so the same prompt and seed give the same tokens.
"""
import dataclasses
import json
import threading
from typing import Iterator, List, Optional, Sequence, Union

from . import _native
from ._native import InferError

Prompt = Union[str, Sequence[int], Sequence[dict]]


@dataclasses.dataclass
class Completion:
    """One finished request."""
    text: Optional[str]          # None when the artifact has no tokenizer
    token_ids: List[int]         # every generated id (a stop token included)
    finish_reason: str           # "stop" (stop token or string) or "length"
    prompt_tokens: int
    stop_string: Optional[str] = None


@dataclasses.dataclass
class Chunk:
    """What one step added to a streamed request; the last one is finished."""
    text: str
    token_ids: List[int]
    finished: bool = False
    finish_reason: Optional[str] = None


class Engine:
    """A compiled model (MODEL.infer) on a backend, with its paged KV cache and scheduler.

    device: "cuda", "cpu", or None (cuda when the artifact has GPU code and a GPU is there).
    The other options are infer-run generate's (docs/cli.md). One engine serves one
    caller at a time; calls from several threads are serialized.
    """

    def __init__(self, artifact: str, device: Optional[str] = None, *,
                 kv_blocks: Optional[int] = None, max_batch_tokens: Optional[int] = None,
                 max_sequences: Optional[int] = None, prefix_caching: bool = True,
                 run_ahead: bool = True):
        lib = _native.library()
        options = {"device": device or "", "prefix_caching": prefix_caching, "run_ahead": run_ahead}
        for key, value in (("kv_blocks", kv_blocks), ("max_batch_tokens", max_batch_tokens),
                           ("max_sequences", max_sequences)):
            if value is not None:
                options[key] = value
        self._lock = threading.Lock()
        self._handle = _native.call(lib.infer_engine_open, _native.encode(str(artifact)),
                                    json.dumps(options).encode("utf-8"))
        self.info = _native.call(lib.infer_engine_info, self._handle)

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _native.library().infer_engine_close(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # -- text -------------------------------------------------------------------------------------
    def tokenize(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """The ids of `text` (with the tokenizer's special tokens, e.g. BOS, when asked)."""
        with self._lock:
            return self._call("infer_engine_tokenize", _native.encode(text), int(add_special_tokens))

    def detokenize(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        with self._lock:
            return self._call("infer_engine_detokenize", json.dumps([int(i) for i in ids]).encode(),
                              int(skip_special_tokens))

    def apply_chat_template(self, messages: Sequence[dict]) -> str:
        """The prompt the chat template makes of `messages` (with the generation prompt)."""
        with self._lock:
            return self._call("infer_engine_apply_chat_template", _json(list(messages)))

    # -- generation -------------------------------------------------------------------------------
    def generate(self, prompts: Union[Prompt, Sequence[Prompt]], max_tokens: int = 16,
                 temperature: float = 0.0, top_p: float = 1.0, top_k: int = 0, seed: int = 0,
                 stop: Union[None, str, Sequence[str]] = None,
                 ignore_eos: bool = False) -> List[Completion]:
        """Generates for every prompt, batched together; returns a Completion per prompt.

        A prompt is a text, a list of token ids, or a chat (a list of {"role", "content"}
        dicts, through the model's chat template). temperature 0 is greedy. Prompt i's
        sampler is seeded from (seed, i), as `infer-run generate` seeds request i.
        """
        batch = _as_batch(prompts)
        params = _params(max_tokens, temperature, top_p, top_k, seed, stop, ignore_eos)
        with self._lock:
            ids = [self._submit(prompt, params, key) for key, prompt in enumerate(batch)]
            done = {}
            try:
                while len(done) < len(ids):
                    for update in self._call("infer_engine_step"):
                        if update["finished"] and update["id"] in ids:
                            done[update["id"]] = update
            finally:
                self._drain(set(ids) - set(done))
        has_text = self.info["tokenizer"]
        return [_completion(done[i], has_text) for i in ids]

    def chat(self, messages: Sequence[dict], **kwargs) -> Completion:
        """One conversation through the chat template; kwargs as generate's."""
        return self.generate([list(messages)], **kwargs)[0]

    def stream(self, prompt: Prompt, max_tokens: int = 16, temperature: float = 0.0,
               top_p: float = 1.0, top_k: int = 0, seed: int = 0,
               stop: Union[None, str, Sequence[str]] = None,
               ignore_eos: bool = False) -> Iterator[Chunk]:
        """Yields the request's text as it is generated, whole UTF-8 characters only.

        Stopping the iteration early cancels the request.
        """
        params = _params(max_tokens, temperature, top_p, top_k, seed, stop, ignore_eos)
        with self._lock:
            request = self._submit(prompt, params, 0)
            finished = False
            try:
                while not finished:
                    for update in self._call("infer_engine_step"):
                        if update["id"] != request:
                            continue
                        finished = update["finished"]
                        if update["finished"] and update["finish_reason"] == "error":
                            raise InferError(update["error"])
                        if update["text"] or update["token_ids"] or finished:
                            yield Chunk(update["text"], update["token_ids"], finished,
                                        update.get("finish_reason"))
            finally:
                if not finished:
                    self._drain({request})

    # -- internals --------------------------------------------------------------------------------
    def _call(self, name, *args):
        if not self._handle:
            raise InferError("the engine is closed")
        return _native.call(getattr(_native.library(), name), self._handle, *args)

    def _submit(self, prompt: Prompt, params: dict, key: int) -> int:
        request = dict(params, sampler_key=key)
        if isinstance(prompt, str):
            request["prompt"] = prompt
        elif prompt and all(isinstance(m, dict) for m in prompt):
            request["messages"] = list(prompt)
        else:
            request["prompt_ids"] = [int(i) for i in prompt]
        return self._call("infer_engine_submit", _json(request))

    def _drain(self, pending):
        """Cancels `pending` requests and steps until the engine has reported them ended."""
        for request in pending:
            try:
                self._call("infer_engine_cancel", request)
            except InferError:
                pass  # it finished in the meantime
        while pending and _native.library().infer_engine_has_unfinished(self._handle):
            for update in self._call("infer_engine_step"):
                if update["finished"]:
                    pending.discard(update["id"])


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _params(max_tokens, temperature, top_p, top_k, seed, stop, ignore_eos) -> dict:
    if isinstance(stop, str):
        stop = [stop]
    return {"max_tokens": int(max_tokens), "temperature": float(temperature),
            "top_p": float(top_p), "top_k": int(top_k), "seed": int(seed),
            "stop": list(stop or []), "ignore_eos": bool(ignore_eos)}


def _as_batch(prompts) -> list:
    """A single prompt (a text, a list of ids, a chat) as a batch of one."""
    if isinstance(prompts, str):
        return [prompts]
    prompts = list(prompts)
    if not prompts:
        raise ValueError("generate needs at least one prompt")
    if all(isinstance(p, int) for p in prompts) or all(isinstance(p, dict) for p in prompts):
        return [prompts]
    return prompts


def _completion(update: dict, has_text: bool) -> Completion:
    if update["finish_reason"] == "error":
        raise InferError(update["error"])
    return Completion(text=update["output_text"] if has_text else None,
                      token_ids=update["output_ids"], finish_reason=update["finish_reason"],
                      prompt_tokens=update["prompt_tokens"], stop_string=update["stop_string"])
