/*===- infer.h - the C API of infer's runtime ------------------------------===*
 *
 * A C ABI over serving::Engine (runtime/serving/Engine.h) for the Python
 * package (python/infer, through ctypes) and any other language: one shared
 * library, libinfer.so, that works with every Python version and needs no
 * compiler where it is used. Structured values cross as UTF-8 JSON text, so
 * the ABI stays a handful of functions as the engine grows.
 *
 * Every function that can fail takes `char **error`: on failure it returns
 * NULL (or -1) and, when `error` is not NULL, stores a message there that the
 * caller frees with infer_free. Strings returned are freed with infer_free.
 * An engine is used by one thread at a time.
 *
 *===----------------------------------------------------------------------===*/
#ifndef INFER_RUNTIME_CAPI_INFER_H
#define INFER_RUNTIME_CAPI_INFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's meaning changes; python/infer checks it. */
#define INFER_C_API_VERSION 1

typedef struct infer_engine infer_engine;

#if defined(__GNUC__)
#define INFER_API __attribute__((visibility("default")))
#else
#define INFER_API
#endif

INFER_API int infer_api_version(void);

/* Opens MODEL.infer on a backend. options_json (NULL: defaults):
 *   {"device": "cpu" | "cuda" | "" (cuda when the artifact has GPU code and
 *    a GPU is there), "kv_blocks": N, "max_batch_tokens": N,
 *    "max_sequences": N, "prefix_caching": bool, "run_ahead": bool} */
INFER_API infer_engine *infer_engine_open(const char *artifact_path, const char *options_json,
                                          char **error);
INFER_API void infer_engine_close(infer_engine *engine);

/* {"model", "device", "vocab", "max_seq_len", "kv_blocks", "tokenizer": bool,
 *  "chat_template": bool, "stop_token_ids": [...]} */
INFER_API char *infer_engine_info(infer_engine *engine, char **error);

/* The ids of `text` as a JSON array; add_special_tokens: the tokenizer's
 * (e.g. Llama's BOS), as a plain prompt gets them. */
INFER_API char *infer_engine_tokenize(infer_engine *engine, const char *text,
                                      int add_special_tokens, char **error);
/* A JSON array of ids as a JSON string. */
INFER_API char *infer_engine_detokenize(infer_engine *engine, const char *ids_json,
                                        int skip_special_tokens, char **error);
/* The chat template applied to a JSON list of messages, with the
 * generation prompt, as a JSON string. */
INFER_API char *infer_engine_apply_chat_template(infer_engine *engine, const char *messages_json,
                                                 char **error);

/* Queues a request; returns its id (>= 0), or -1. request_json:
 *   one of {"prompt": "text"}, {"prompt_ids": [ids]}, {"messages": [...]},
 *   and "max_tokens" (16), "temperature" (0: greedy), "top_p" (1), "top_k"
 *   (0: off), "seed" (0), "sampler_key" (0: with the seed, what the
 *   request's RNG starts from), "stop": [strings], "ignore_eos": false. */
INFER_API int64_t infer_engine_submit(infer_engine *engine, const char *request_json, char **error);
/* Ends a request; the next step reports it finished ("cancelled"). 0 or -1. */
INFER_API int infer_engine_cancel(infer_engine *engine, int64_t request, char **error);
/* 1 while a submitted request has not been reported finished. */
INFER_API int infer_engine_has_unfinished(infer_engine *engine);

/* Runs one step and returns what it did as a JSON array of
 *   {"id", "token_ids": [...], "text": "...", "finished": bool} and, when
 *   finished, "finish_reason" ("stop" | "length" | "cancelled" | "error"),
 *   "finish_detail", "stop_string", "error", "prompt_tokens",
 *   "cached_tokens", "preemptions", "output_ids": [...], "output_text". */
INFER_API char *infer_engine_step(infer_engine *engine, char **error);

INFER_API void infer_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif /* INFER_RUNTIME_CAPI_INFER_H */
