// The stages of a Hugging Face `tokenizers` pipeline that TextTokenizer runs, each parsed from its
// tokenizer.json section: normalizer, pre-tokenizer, BPE model, post-processor, and the matcher
// that finds added tokens. Internal to text_tokenizer.cpp; text is handled as code points
// (std::u32string) until the model looks it up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/vlm/utf8.h"

namespace lerobot::tokenizer_detail {

// `where` strings in errors are "<file>: <json key path>".

// normalizer: null, NFC (text that NFC would change is refused), Lowercase, Strip, Prepend,
// Replace (literal pattern), Sequence of these.
class TextNormalizer {
 public:
  static TextNormalizer parse(const Json& j, const std::string& where);
  void apply(std::u32string& s) const;

 private:
  enum class Kind { kNfc, kLowercase, kStrip, kPrepend, kReplace };
  struct Step {
    Kind kind;
    std::u32string a, b;               // Prepend: a; Replace: a -> b
    bool left = false, right = false;  // Strip
  };
  void add(const Json& j, const std::string& where);
  std::vector<Step> steps_;
  std::string where_;
};

// pre_tokenizer: null, ByteLevel, Digits, Split (literal pattern or GPT-2's regex), Metaspace
// (prepend_scheme always/first/never, split), Sequence.
class PreTokenizer {
 public:
  static PreTokenizer parse(const Json& j, const std::string& where);
  // GPT-2 (transformers' GPT2Tokenizer rebuilds its pipeline with this one pre-tokenizer).
  static PreTokenizer byte_level(bool add_prefix_space);
  // Splits one piece of text into the words the model tokenizes (byte-level mapped when a
  // ByteLevel step ran). Empty words are dropped, as `tokenizers` does. `at_text_start`: the piece
  // begins at offset 0 of the text given to the tokenizer (Metaspace's prepend_scheme "first").
  std::vector<std::u32string> apply(const std::u32string& piece, bool at_text_start = true) const;

 private:
  enum class Kind { kByteLevel, kDigits, kSplit, kMetaspace };
  enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  enum class Prepend { kAlways, kFirst, kNever };
  struct Step {
    Kind kind = Kind::kByteLevel;
    bool add_prefix_space = false, use_regex = true;  // ByteLevel
    bool individual_digits = false;                   // Digits
    bool gpt2_regex = false;                          // Split: GPT-2's regex, else `literal`
    std::u32string literal;                           // Split; Metaspace: the replacement
    Behavior behavior = Behavior::kIsolated;
    bool invert = false;
    Prepend prepend = Prepend::kAlways;  // Metaspace
    bool split = true;                   // Metaspace
  };
  void add(const Json& j, const std::string& where);
  // Pieces and, for each, whether it begins at offset 0 of the text.
  void run(const Step& step, std::vector<std::u32string>& pieces, std::vector<bool>& at_start) const;
  std::vector<Step> steps_;
};

// model: BPE (merges as "a b" strings or [a, b] pairs; unk_token, fuse_unk, byte_fallback,
// ignore_merges, continuing_subword_prefix, end_of_word_suffix). Takes nlohmann::json, not the
// insertion-ordered Json: a 256k-entry vocab object would take minutes to parse into that.
class BpeModel {
 public:
  static BpeModel parse(const nlohmann::json& j, const std::string& where);
  // transformers' GPT2Tokenizer keeps only the vocab and merges: no unk, no ignore_merges.
  void reset_to_gpt2_options();
  // transformers' GemmaTokenizer keeps the vocab and merges and sets the rest: `unk_token`, fused
  // unk, byte fallback, no dropout, no ignore_merges, no subword prefix or suffix.
  void reset_to_gemma_options(const std::string& unk_token);
  void tokenize(const std::u32string& word, std::vector<int64_t>& out) const;
  std::optional<int64_t> token_id(const std::string& token) const;
  const std::unordered_map<std::string, int64_t>& vocab() const { return vocab_; }

 private:
  struct Merge {
    int32_t rank;
    int64_t new_id;
  };
  static uint64_t pair_key(int64_t a, int64_t b) {
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
  }
  void merge_all(std::vector<int64_t>& ids) const;
  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<std::string> unk_token_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix
  std::string where_;
};

// Finds added tokens as aho-corasick's LeftmostLongest does (how AddedVocabulary matches): the
// leftmost match, the longest one starting there, then on from its end.
class TokenMatcher {
 public:
  struct Match {
    size_t start, end, token;
  };
  void add(const std::u32string& pattern, size_t token);
  std::vector<Match> find_all(const std::u32string& s) const;

 private:
  std::unordered_map<char32_t, std::vector<std::pair<std::u32string, size_t>>> by_first_;  // longest first
};

// post_processor: null, ByteLevel (no-op for ids), TemplateProcessing (its `single` template),
// RobertaProcessing, BertProcessing, Sequence of these.
class PostProcessor {
 public:
  static PostProcessor parse(const Json& j, const std::string& where);
  std::vector<int64_t> apply(const std::vector<int64_t>& ids) const;
  // How many ids apply() adds: truncation keeps max_length minus this many of the text's ids.
  int64_t added_count() const;

 private:
  struct Item {
    bool sequence;             // the text's ids ($A)
    std::vector<int64_t> ids;  // else these special ids
  };
  void add(const Json& j, const std::string& where);
  std::vector<std::vector<Item>> templates_;  // applied in order
};

}  // namespace lerobot::tokenizer_detail
