// A Hugging Face `tokenizers`-compatible text tokenizer for the language input of VLM-based
// policies (SmolVLA's SmolVLM, π0/π0.5's PaliGemma): reads a tokenizer folder (tokenizer.json +
// tokenizer_config.json) and returns the ids Python transformers 5 / tokenizers 0.23 return for
// `tokenizer(texts, max_length=L, truncation=True, padding=..., padding_side=...)`, as LeRobot's
// TokenizerProcessorStep calls it.
//
// Supported: BPE models (byte-level or SentencePiece-style with byte fallback and fused unk),
// added tokens (matched in the raw text first, longest match first), the normalizers NFC
// (already-composed text only), Lowercase, Strip, Prepend, Replace; the pre-tokenizers ByteLevel,
// Digits, Split (literal or GPT-2 regex), Metaspace; the post-processors TemplateProcessing,
// Roberta/BertProcessing, ByteLevel; Sequences of these. Anything else is refused on load,
// naming the type and the file.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lerobot {

namespace tokenizer_detail {
struct Pipeline;
}

class TextTokenizer {
 public:
  struct Encoded {
    at::Tensor input_ids;       // (B, L) int64
    at::Tensor attention_mask;  // (B, L) bool, true on real tokens
  };

  // Reads dir/tokenizer.json and dir/tokenizer_config.json. tokenizer_class TokenizersBackend /
  // PreTrainedTokenizerFast (or none) runs tokenizer.json as it is; GPT2Tokenizer(Fast) and
  // GemmaTokenizer(Fast) are rebuilt as transformers 5 rebuilds them (GPT-2: a plain ByteLevel
  // pre-tokenizer, no normalizer; Gemma: spaces to "▁", BPE with byte fallback and fused unk,
  // "[<bos>] $A [<eos>]" from add_bos_token/add_eos_token). Special tokens named in the config but
  // missing from tokenizer.json are added as transformers adds them.
  static TextTokenizer from_folder(const std::filesystem::path& dir);

  // The ids of one text with the post-processor's special tokens (add_special_tokens=True).
  std::vector<int64_t> encode(const std::string& utf8) const;

  // transformers' batch call: with `truncation`, each text keeps its first max_length ids (the
  // post-processor's special tokens included; the config's truncation_side "left" keeps the
  // last); `longest` pads to the longest row, else to max_length; `pad_right` picks the side.
  Encoded encode_batch(const std::vector<std::string>& texts, int64_t max_length, bool longest,
                       bool pad_right, bool truncation = true) const;

  // The id of a token (added tokens first, then the model's vocab); throws naming the token.
  int64_t token_id(const std::string& token) const;
  // The id of tokenizer_config.json's pad_token; throws when the config names none.
  int64_t pad_token_id() const;
  // len(tokenizer): the model's vocab plus the added tokens not in it.
  int64_t vocab_size() const;

  // The config's named special tokens, name -> token text: bos_token, eos_token, pad_token, ...,
  // and model-specific ones (fake_image_token, global_image_token, image_token, ...).
  const std::map<std::string, std::string>& special_tokens() const;
  // special_tokens().at(name), throwing naming the name and the config file when absent.
  const std::string& special_token(const std::string& name) const;

 private:
  explicit TextTokenizer(std::shared_ptr<const tokenizer_detail::Pipeline> pipeline);
  std::shared_ptr<const tokenizer_detail::Pipeline> pipeline_;
};

}  // namespace lerobot
