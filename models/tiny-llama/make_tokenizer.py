#!/usr/bin/env python3
"""Builds the bundled tiny-llama's tokenizer files with the `tokenizers` library.

tiny-llama has random weights and a 512-token vocabulary, so no real tokenizer
fits it. This trains a byte-level BPE of exactly 512 tokens (256 bytes, 5
special tokens, 251 merges) on the repository's LICENSE text, so that any
text encodes and the demo goes from text to text. Its output is noise: the
weights are random.

  python3 models/tiny-llama/make_tokenizer.py     # rewrites the files beside it

Writes tokenizer.json, tokenizer_config.json (a ChatML chat template, bos/eos)
and generation_config.json (the ids that end a generation).
"""
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|pad|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")


def main():
    text = open(os.path.join(HERE, "..", "..", "LICENSE"), encoding="utf-8").read()
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(text.split("\n\n"), trainer=trainer)
    bos, eos, im_end = (tokenizer.token_to_id(t) for t in ("<s>", "</s>", "<|im_end|>"))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)])
    assert tokenizer.get_vocab_size() == 512, tokenizer.get_vocab_size()
    tokenizer.save(os.path.join(HERE, "tokenizer.json"))
    config = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<|pad|>",
              "chat_template": CHAT_TEMPLATE, "model_max_length": 4096,
              "tokenizer_class": "PreTrainedTokenizerFast"}
    with open(os.path.join(HERE, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(HERE, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": bos, "eos_token_id": [eos, im_end]}, f, indent=2)
        f.write("\n")
    print(f"tokenizer: {tokenizer.get_vocab_size()} tokens; bos {bos}, eos {eos}, <|im_end|> {im_end}")


if __name__ == "__main__":
    main()
