// TextTokenizer: encodes as `tokenizers` 0.23 does (added tokens split out of the raw text, then
// normalizer, pre-tokenizer, BPE, post-processor, truncation, padding) with the pipeline
// text_tokenizer_load.cpp reads from a tokenizer folder.
#include "lerobot/policies/vlm/text_tokenizer.h"

#include <torch/torch.h>

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/policies/vlm/text_tokenizer_pipeline.h"
#include "lerobot/policies/vlm/unicode_classes.h"

namespace lerobot {
namespace tokenizer_detail {

std::optional<int64_t> Pipeline::find_id(const std::string& token) const {
  auto it = added_index.find(token);
  if (it != added_index.end()) return added[it->second].id;
  return model.token_id(token);
}

void Pipeline::add_token(AddedToken t) {
  if (t.text.empty() || added_index.count(t.text)) return;
  if (auto id = find_id(t.text)) {
    t.id = *id;
  } else {
    const int64_t vocab = static_cast<int64_t>(model.vocab().size());
    int64_t max_id = -1;
    for (const AddedToken& a : added) max_id = std::max(max_id, a.id);
    t.id = max_id < 0 ? vocab : (max_id >= vocab || vocab == 0) ? max_id + 1 : vocab;
  }
  t.content = decode_utf8(t.text, config_file);
  added_index[t.text] = added.size();
  added.push_back(std::move(t));
}

void Pipeline::split_added(const std::u32string& s, bool s_at_start, const TokenMatcher& matcher,
                           std::vector<Piece>& out) const {
  size_t offset = 0;
  const size_t n = s.size();
  for (const auto& m : matcher.find_all(s)) {
    const AddedToken& tok = added[m.token];
    size_t start = m.start, stop = m.end;
    if (tok.single_word) {
      const bool start_space = start == 0 || !unicode::is_word_char(s[start - 1]);
      const bool stop_space = stop == n || !unicode::is_word_char(s[stop]);
      if (!start_space || !stop_space) continue;
    }
    if (tok.lstrip) {
      size_t new_start = start;
      while (new_start > 0 && unicode::is_whitespace(s[new_start - 1])) --new_start;
      start = std::max(new_start, offset);
    }
    if (tok.rstrip)
      while (stop < n && unicode::is_whitespace(s[stop])) ++stop;
    if (offset < start) out.push_back({s.substr(offset, start - offset), -1, s_at_start && offset == 0});
    out.push_back({{}, tok.id});
    offset = stop;
  }
  if (offset < n) out.push_back({s.substr(offset), -1, s_at_start && offset == 0});
}

std::vector<int64_t> Pipeline::encode_content(const std::string& utf8) const {
  std::vector<Piece> raw, pieces;
  split_added(decode_utf8(utf8, "text given to the tokenizer of " + tokenizer_file), true, raw_matcher, raw);
  for (Piece& p : raw) {
    if (p.id >= 0) {
      pieces.push_back(std::move(p));
      continue;
    }
    normalizer.apply(p.text);
    split_added(p.text, p.at_start, normalized_matcher, pieces);
  }
  std::vector<int64_t> ids;
  for (const Piece& p : pieces) {
    if (p.id >= 0) {
      ids.push_back(p.id);
      continue;
    }
    for (const std::u32string& word : pre_tokenizer.apply(p.text, p.at_start)) model.tokenize(word, ids);
  }
  return ids;
}

std::vector<int64_t> Pipeline::encode_content_cached(const std::string& utf8) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (auto it = cache.find(utf8); it != cache.end()) return it->second;
  }
  std::vector<int64_t> ids = encode_content(utf8);
  std::lock_guard<std::mutex> lock(cache_mutex);
  if (cache.size() < kCacheEntries) cache.emplace(utf8, ids);
  return ids;
}

}  // namespace tokenizer_detail

using tokenizer_detail::Pipeline;

TextTokenizer::TextTokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}

TextTokenizer TextTokenizer::from_folder(const std::filesystem::path& dir) {
  return TextTokenizer(tokenizer_detail::load_pipeline(dir));
}

std::vector<int64_t> TextTokenizer::encode(const std::string& utf8) const {
  return pipeline_->post.apply(pipeline_->encode_content_cached(utf8));
}

TextTokenizer::Encoded TextTokenizer::encode_batch(const std::vector<std::string>& texts, int64_t max_length,
                                                   bool longest, bool pad_right, bool truncation) const {
  const Pipeline& p = *pipeline_;
  const int64_t added = p.post.added_count();
  if ((truncation || !longest) && max_length < std::max<int64_t>(added, 1))
    throw_usage("max_length " + std::to_string(max_length) + " leaves no room for the text",
                "the tokenizer of " + p.tokenizer_file,
                "use a max_length of at least " + std::to_string(std::max<int64_t>(added, 1)) +
                    " (the post-processor adds " + std::to_string(added) + " special tokens)");
  const int64_t pad_id = pad_token_id();
  std::vector<std::vector<int64_t>> rows;
  int64_t width = longest ? 0 : max_length;
  for (const std::string& text : texts) {
    std::vector<int64_t> ids = p.encode_content_cached(text);
    const auto keep = static_cast<size_t>(std::max<int64_t>(max_length - added, 0));
    if (truncation && ids.size() > keep) {  // tokenizers truncates before adding special tokens
      if (p.truncate_left)
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(keep));
      else
        ids.resize(keep);
    }
    rows.push_back(p.post.apply(ids));
    const auto len = static_cast<int64_t>(rows.back().size());
    if (!longest && len > max_length)
      throw_usage("a text has " + std::to_string(len) + " tokens, more than max_length " +
                      std::to_string(max_length) + ", and truncation is off",
                  "the tokenizer of " + p.tokenizer_file, "turn truncation on or raise max_length");
    width = std::max(width, len);
  }
  const auto batch = static_cast<int64_t>(rows.size());
  auto ids = torch::full({batch, width}, pad_id, torch::kLong);
  auto mask = torch::zeros({batch, width}, torch::kBool);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<bool, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    const auto len = static_cast<int64_t>(rows[b].size());
    const int64_t start = pad_right ? 0 : width - len;
    for (int64_t i = 0; i < len; ++i) {
      ids_a[b][start + i] = rows[b][i];
      mask_a[b][start + i] = true;
    }
  }
  return {ids, mask};
}

int64_t TextTokenizer::token_id(const std::string& token) const {
  if (auto id = pipeline_->find_id(token)) return *id;
  throw_checkpoint("token '" + token + "' is not in the tokenizer's vocab or added tokens",
                   pipeline_->tokenizer_file,
                   "check the token's spelling (special tokens are listed in tokenizer.json's added_tokens)");
}

int64_t TextTokenizer::pad_token_id() const {
  if (!pipeline_->pad_token)
    throw_checkpoint("the tokenizer has no pad_token, so it cannot pad", pipeline_->config_file,
                     "set \"pad_token\" in tokenizer_config.json (SmolVLM's is \"<|im_end|>\")");
  return *pipeline_->find_id(*pipeline_->pad_token);
}

int64_t TextTokenizer::vocab_size() const { return pipeline_->vocab_size; }

const std::map<std::string, std::string>& TextTokenizer::special_tokens() const {
  return pipeline_->special_tokens;
}

const std::string& TextTokenizer::special_token(const std::string& name) const {
  auto it = pipeline_->special_tokens.find(name);
  if (it == pipeline_->special_tokens.end())
    throw_checkpoint("the tokenizer config names no '" + name + "'", pipeline_->config_file,
                     "add \"" + name + "\" to tokenizer_config.json (or to its extra_special_tokens)");
  return it->second;
}

}  // namespace lerobot
