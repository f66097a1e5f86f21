#!/usr/bin/env python3
"""Writes tests/policies/data/text_tokenizer/: small tokenizers and what transformers makes of texts.

The C++ TextTokenizer (src/lerobot/policies/vlm/text_tokenizer.*) must return the ids that
transformers 5 / tokenizers 0.23 return. tests/policies/data/smolvla_tiny_vlm covers SmolVLM's
pipeline; these four tiny tokenizers, trained here, cover the rest of what it claims to support:
  - bytelevel_template: NFC + Lowercase, ByteLevel with add_prefix_space, merges as "a b" strings,
    a normalized added token, lstrip/rstrip and single_word added tokens, a config special token
    missing from tokenizer.json, TemplateProcessing "<s> $A </s>", pad_token as an object;
  - split_roberta: Strip + Replace, Split pre-tokenizers with every behavior (and invert), GPT-2's
    regex in a Split, Digits in groups, ByteLevel without regex, ignore_merges with a vocab entry
    no merge reaches, a config mask_token that is in the vocab only, RobertaProcessing,
    truncation_side "left";
  - llama_bytefallback: Llama-2 style: Prepend + Replace to "▁", no pre-tokenizer, unk fused,
    byte fallback, TemplateProcessing "<s> $A";
  - gpt2_class: tokenizer_class GPT2Tokenizer, which transformers 5 rebuilds (plain ByteLevel with
    the config's add_prefix_space; the tokenizer.json normalizer/pre-tokenizer/ignore_merges are
    dropped) and whose added tokens it re-adds in id order.
Each folder holds tokenizer.json + tokenizer_config.json; cases.json holds, per folder, len(tokenizer),
the pad id, some token ids, each text's ids and padded batches (input_ids, attention_mask).

    python3 text_tokenizer_cases.py OUT_DIR
"""
import json
import sys
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
CORPUS = [
    "Pick up the red cube and place it in the bin.",
    "Push the T-shaped block onto the target.",
    "Grasp the lego brick, then put it into the box",
    "open the drawer 3 times; close it 12 times",
    "Insert the peg into the socket (carefully!)",
    "Stack 2 blue blocks on top of 1 green block",
    "pre-grasp the well-known tool::handle",
] * 10
ACCENTED = ["Déplacer la tasse vers la gauche — ensuite s'arrêter"] * 5
NUMBERS = ["in 2024 move 123 blocks 1234 times, 12 or 123", "step 2024 of 12345"] * 10


def train(tok, corpus, vocab_size, special):
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def bytelevel_template():
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)
    train(tok, CORPUS + ACCENTED, 130, ["<s>", "</s>", "<pad>"])
    tok.add_special_tokens([AddedToken("<sep>", lstrip=True, rstrip=True, special=True)])
    tok.add_tokens([AddedToken("[Robot]", normalized=True), AddedToken("grip", single_word=True, normalized=False)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    j = json.loads(tok.to_str())
    j["model"]["merges"] = [" ".join(m) for m in j["model"]["merges"]]  # the older "a b" form
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
              "pad_token": {"__type": "AddedToken", "content": "<pad>", "lstrip": False, "normalized": False,
                            "rstrip": False, "single_word": False, "special": True},
              "extra_special_tokens": {"robot_token": "<robot>"}, "model_max_length": 64}
    texts = ["Pick up the RED cube", "  hello   world  ", "[ROBOT] grip the peg <sep>  then grip!",
             "regrip grips grip_x grip", "<s>already</s>", "<robot>go<robot>", "Déplacer ÉTÉ", "İstanbul", "",
             "x", "tab\there", "3.14 and 42", "lll ::::: welll"]
    return j, config, texts, ["<robot>", "[Robot]", "<sep>"]


def split_roberta():
    tok = Tokenizer(models.BPE(unk_token=None, ignore_merges=True))
    tok.normalizer = normalizers.Sequence([normalizers.Strip(), normalizers.Replace("``", '"')])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split("|", "removed"),
        pre_tokenizers.Split("-", "merged_with_next"),
        pre_tokenizers.Split("::", "merged_with_previous"),
        pre_tokenizers.Split("xx", "contiguous"),
        pre_tokenizers.Split("~", "merged_with_next", invert=True),
        pre_tokenizers.Split(Regex(GPT2_REGEX), "isolated"),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    train(tok, CORPUS + NUMBERS, 140, ["<s>", "<pad>", "</s>"])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    vocab["Ġxyzzy"] = len(vocab)  # only ignore_merges reaches it
    vocab["<mask>"] = len(vocab)  # a config special token that is in the vocab only
    config = {"tokenizer_class": "TokenizersBackend", "pad_token": "<pad>", "mask_token": "<mask>",
              "truncation_side": "left", "extra_special_tokens": ["<extra_a>"]}
    texts = ["a|b|c well-known", "pre-trained::x::y", "xxxxxax xx", "  ``quoted'' text  ", " xyzzy xyzzy",
             "<mask> the <mask>", "in 2024 move 12-345", "~a~b~~c~", "a<extra_a>b", "Pick up the red cube", ""]
    return j, config, texts, ["<mask>", "<extra_a>", "Ġxyzzy"]


def llama_bytefallback():
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    train(tok, CORPUS, 110, ["<unk>", "<s>", "</s>"])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    for code in ("<0xC3>", "<0xA9>", "<0x0A>"):  # é and newline fall back to bytes; other unknowns to <unk>
        vocab[code] = len(vocab)
    config = {"tokenizer_class": "TokenizersBackend", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
              "pad_token": "</s>", "add_bos_token": True}
    texts = ["Pick up the cube", "héllo", "中文 text", "中é", "line\nbreak", "", "  double  space", "Ωmega!",
             "put the peg into the socket", "lll ::::: welll"]
    return j, config, texts, ["<0xC3>", "<unk>"]


def gpt2_class():
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    train(tok, CORPUS + NUMBERS, 150, ["<|endoftext|>"])
    tok.add_tokens(["zzq", "qqz"])
    # What the GPT2Tokenizer class drops: this normalizer, these pre-tokenizers, ignore_merges.
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    j = json.loads(tok.to_str())
    j["model"]["ignore_merges"] = True
    vocab = j["model"]["vocab"]
    vocab["Ġxyzzy"] = len(vocab)
    for t in j["added_tokens"]:  # listed ids out of order: the class re-adds them sorted by id
        t["id"] = {"zzq": 900, "qqz": 800}.get(t["content"], t["id"])
    config = {"tokenizer_class": "GPT2Tokenizer", "add_prefix_space": True, "bos_token": "<|endoftext|>",
              "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
    texts = ["In 2024 move 1234 Blocks", "abc123def", "xyzzy", "qqz zzq", "<|endoftext|>x", "Pick up the red cube",
             "step 12345 of 2024", "", " lead", "lll ::::: welll"]
    return j, config, texts, ["zzq", "qqz"]


def main():
    out = Path(sys.argv[1])
    cases = {}
    for make in (bytelevel_template, split_roberta, llama_bytefallback, gpt2_class):
        name = make.__name__
        tj, config, texts, probe_tokens = make()
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False, separators=(",", ":")))
        (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1))
        tok = AutoTokenizer.from_pretrained(str(folder))
        entry = {"class": type(tok).__name__, "vocab_size": len(tok), "pad_token_id": tok.pad_token_id,
                 "token_ids": {t: tok.convert_tokens_to_ids(t) for t in probe_tokens},
                 "cases": [{"text": t, "ids": tok(t)["input_ids"]} for t in texts], "batch": texts[:4], "padded": []}
        for padding, max_length, truncation in (("longest", 6, True), ("max_length", 10, True),
                                                ("longest", 4, False), ("max_length", 40, False)):
            for side in ("right", "left"):
                enc = tok(texts[:4], max_length=max_length, truncation=truncation, padding=padding, padding_side=side)
                entry["padded"].append({"padding": padding, "max_length": max_length, "truncation": truncation,
                                        "side": side, "input_ids": enc["input_ids"],
                                        "attention_mask": enc["attention_mask"]})
        cases[name] = entry
    (out / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, separators=(",", ":")))
    print("wrote", out, {k: v["vocab_size"] for k, v in cases.items()})


if __name__ == "__main__":
    main()
