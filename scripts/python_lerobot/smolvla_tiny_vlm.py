#!/usr/bin/env python3
"""Writes a tiny SmolVLM backbone folder for the SmolVLA tests: tests/policies/data/smolvla_tiny_vlm/.

LeRobot's SmolVLA reads its backbone's architecture and tokenizer from `vlm_model_name`
(HuggingFaceTB/SmolVLM2-500M-Video-Instruct by default: a Hub download). The tests cannot download,
so this writes a folder of the same kind with transformers and tokenizers themselves:
  - config.json: a SmolVLMConfig (SigLIP-style vision tower, pixel-shuffle connector, Llama text
    model) shrunk to a few layers and widths;
  - tokenizer.json / tokenizer_config.json: a byte-level BPE trained here on robot task strings,
    with SmolLM2's pre-tokenizer (individual digits, then byte-level with GPT-2's regex) and
    SmolVLM's special tokens (<fake_token_around_image>, <global-img>, <image>, ...);
  - the processor files AutoProcessor needs;
  - model.safetensors: random weights in bfloat16, for load_vlm_weights=true (LeRobot then loads
    the backbone in bfloat16; the tests overwrite the values, so only names, shapes and dtypes count).
It also records, for the tokenizer test, what the real `tokenizers` library makes of some texts:
tokenizer_cases.json.

    python3 smolvla_tiny_vlm.py OUT_DIR
"""
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
import torch
from transformers import (PreTrainedTokenizerFast, SmolVLMConfig, SmolVLMForConditionalGeneration,
                          SmolVLMImageProcessor, SmolVLMProcessor, SmolVLMVideoProcessor)

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<fake_token_around_image>", "<image>",
           "<global-img>", "<end_of_utterance>"]
CORPUS = [
    "Pick up the red cube and place it in the bin.\n",
    "Push the T-shaped block onto the target.\n",
    "Grasp a lego brick, then put it into the box\n",
    "open the drawer 3 times; close it 12 times\n",
    "Insert the peg into the socket (carefully!)\n",
    "Transfer the cube from the left arm to the right arm.\n",
    "Fold the towel in half, then in half again.\n",
    "Stack 2 blue blocks on top of 1 green block\n",
    "pick up the cup; pour water into the bowl\n",
    "Déplacer la tasse vers la gauche — ensuite s'arrêter.\n",
] * 20

CASES = [
    "Pick up the red cube and place it in the bin.\n",
    "Push the T-shaped block onto the target.",
    "stack 123 blocks, then 4567 more\n",
    "  leading spaces and   inner   runs  \n",
    "tabs\tand\nnew\nlines\n\n",
    "unicode: Déplacer — ensuite s'arrêter ✓ 中文\n",
    "it's they're we've I'm you'll he'd\n",
    "<image>look<global-img> here<fake_token_around_image>\n",
    "",
    "\n",
    "UPPER lower MiXeD 3.14 -2e10\n",
    "a very long task description that goes on and on past the maximum token length of the step\n",
]


def make_tokenizer(out: Path):
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<end_of_utterance>",
        pad_token="<|im_end|>", unk_token="<|endoftext|>", model_max_length=8192,
        extra_special_tokens={"fake_image_token": "<fake_token_around_image>", "image_token": "<image>",
                              "end_of_utterance_token": "<end_of_utterance>",
                              "global_image_token": "<global-img>"})
    return fast


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = make_tokenizer(out)
    vocab = len(tokenizer)
    config = SmolVLMConfig(
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                           image_size=32, patch_size=8),
        text_config=dict(model_type="llama", hidden_size=48, intermediate_size=96, num_hidden_layers=4,
                         num_attention_heads=6, num_key_value_heads=2, head_dim=8, vocab_size=vocab,
                         rms_norm_eps=1e-5, max_position_embeddings=512,
                         pad_token_id=tokenizer.pad_token_id),
        scale_factor=2, image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tokenizer.pad_token_id)
    config.save_pretrained(out)
    torch.manual_seed(0)
    SmolVLMForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(out)
    image_processor = SmolVLMImageProcessor(size={"longest_edge": 32}, max_image_size={"longest_edge": 32})
    video_processor = SmolVLMVideoProcessor(size={"longest_edge": 32}, max_image_size={"longest_edge": 32})
    processor = SmolVLMProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                 video_processor=video_processor, image_seq_len=4)
    processor.save_pretrained(out)

    cases = []
    for text in CASES:
        enc = tokenizer(text, add_special_tokens=True)
        cases.append({"text": text, "ids": enc["input_ids"]})
    batch = CASES[:4]
    padded = {}
    for padding, max_length in (("longest", 12), ("max_length", 12)):
        for side in ("right", "left"):
            enc = tokenizer(batch, max_length=max_length, truncation=True, padding=padding, padding_side=side)
            padded[f"{padding}/{side}"] = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
    json.dump({"vocab_size": vocab, "pad_token_id": tokenizer.pad_token_id,
               "fake_image_token_id": tokenizer.convert_tokens_to_ids("<fake_token_around_image>"),
               "global_image_token_id": tokenizer.convert_tokens_to_ids("<global-img>"),
               "cases": cases, "batch": batch, "max_length": 12, "padded": padded},
              open(out / "tokenizer_cases.json", "w"), indent=1, ensure_ascii=False)
    print("wrote", out, "vocab", vocab, sorted(p.name for p in out.iterdir()))


if __name__ == "__main__":
    main()
