// The loaded state behind a TextTokenizer: its stages, its added tokens and the config's special
// tokens. Internal to text_tokenizer.cpp (encoding) and text_tokenizer_load.cpp (loading a folder
// the way transformers 5 does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lerobot/policies/vlm/text_tokenizer_steps.h"

namespace lerobot::tokenizer_detail {

struct AddedToken {
  std::string text;
  std::u32string content;
  int64_t id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
};

// Text still to tokenize (id < 0) or an added token already found. `at_start`: the text begins at
// offset 0 of what was given to the tokenizer (Metaspace's prepend_scheme "first" asks).
struct Piece {
  std::u32string text;
  int64_t id = -1;
  bool at_start = false;
};

struct Pipeline {
  std::string tokenizer_file, config_file;
  TextNormalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel model;
  PostProcessor post;
  std::vector<AddedToken> added;
  std::unordered_map<std::string, size_t> added_index;  // text -> index in `added`
  TokenMatcher raw_matcher, normalized_matcher;
  bool truncate_left = false;
  std::map<std::string, std::string> special_tokens;
  std::optional<std::string> pad_token;
  int64_t vocab_size = 0;

  std::optional<int64_t> find_id(const std::string& token) const;
  // AddedVocabulary::add_tokens: a known token keeps its id, a new one goes after the vocab and
  // the added tokens. A token already added is left as it is.
  void add_token(AddedToken t);
  // AddedVocabulary::split_with_indices: cuts the matches out of `s`, honouring single_word,
  // lstrip and rstrip.
  void split_added(const std::u32string& s, bool s_at_start, const TokenMatcher& matcher,
                   std::vector<Piece>& out) const;
  // The ids of a text before the post-processor.
  std::vector<int64_t> encode_content(const std::string& utf8) const;
  // encode_content, remembered per text: a training run tokenizes its dataset's few tasks every
  // step (B texts per batch), which BPE would redo each time. Bounded, so that an endless stream
  // of new texts (a robot's prompts) only stops being remembered.
  std::vector<int64_t> encode_content_cached(const std::string& utf8) const;

  static constexpr size_t kCacheEntries = 4096;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache;
};

// Reads dir/tokenizer.json and dir/tokenizer_config.json as transformers 5's AutoTokenizer does
// (text_tokenizer_load.cpp).
std::shared_ptr<Pipeline> load_pipeline(const std::filesystem::path& dir);

}  // namespace lerobot::tokenizer_detail
