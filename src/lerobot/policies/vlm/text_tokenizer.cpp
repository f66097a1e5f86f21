// TextTokenizer: loads a tokenizer folder the way transformers 5 does (tokenizer.json, its added
// tokens, the config's special tokens) and encodes as `tokenizers` 0.23 does: added tokens split
// out of the raw text, then normalizer, pre-tokenizer, BPE, post-processor, truncation, padding.
#include "lerobot/policies/vlm/text_tokenizer.h"

#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/vlm/text_tokenizer_steps.h"
#include "lerobot/policies/vlm/unicode_classes.h"

namespace lerobot {
namespace tokenizer_detail {

struct AddedToken {
  std::string text;
  std::u32string content;
  int64_t id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = false;
};

// Text still to tokenize (id < 0) or an added token already found.
struct Piece {
  std::u32string text;
  int64_t id = -1;
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

  std::optional<int64_t> find_id(const std::string& token) const {
    auto it = added_index.find(token);
    if (it != added_index.end()) return added[it->second].id;
    return model.token_id(token);
  }

  // AddedVocabulary::add_tokens: a known token keeps its id, a new one goes after the vocab and
  // the added tokens. A token already added is left as it is.
  void add_token(AddedToken t) {
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

  // AddedVocabulary::split_with_indices: cuts the matches out of `s`, honouring single_word,
  // lstrip and rstrip.
  void split_added(const std::u32string& s, const TokenMatcher& matcher, std::vector<Piece>& out) const {
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
      if (offset < start) out.push_back({s.substr(offset, start - offset)});
      out.push_back({{}, tok.id});
      offset = stop;
    }
    if (offset < n) out.push_back({s.substr(offset)});
  }

  // The ids of a text before the post-processor.
  std::vector<int64_t> encode_content(const std::string& utf8) const {
    std::vector<Piece> raw, pieces;
    split_added(decode_utf8(utf8, "text given to the tokenizer of " + tokenizer_file), raw_matcher, raw);
    for (Piece& p : raw) {
      if (p.id >= 0) {
        pieces.push_back(std::move(p));
        continue;
      }
      normalizer.apply(p.text);
      split_added(p.text, normalized_matcher, pieces);
    }
    std::vector<int64_t> ids;
    for (const Piece& p : pieces) {
      if (p.id >= 0) {
        ids.push_back(p.id);
        continue;
      }
      for (const std::u32string& word : pre_tokenizer.apply(p.text)) model.tokenize(word, ids);
    }
    return ids;
  }

  // encode_content, remembered per text: a training run tokenizes its dataset's few tasks every
  // step (B texts per batch), which BPE would redo each time. Bounded, so that an endless stream of
  // new texts (a robot's prompts) only stops being remembered.
  std::vector<int64_t> encode_content_cached(const std::string& utf8) const {
    {
      std::lock_guard<std::mutex> lock(cache_mutex);
      if (auto it = cache.find(utf8); it != cache.end()) return it->second;
    }
    std::vector<int64_t> ids = encode_content(utf8);
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (cache.size() < kCacheEntries) cache.emplace(utf8, ids);
    return ids;
  }
  static constexpr size_t kCacheEntries = 4096;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache;
};

}  // namespace tokenizer_detail

namespace {

using tokenizer_detail::AddedToken;
using tokenizer_detail::Pipeline;

Json read_json_file(const fs::path& path, const std::string& fix) {
  if (!fs::exists(path)) throw_checkpoint(path.filename().string() + " is missing", path.string(), fix);
  try {
    return Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("not valid JSON: ") + e.what(), path.string());
  }
}

// A token as transformers' config writes it: a string, or an AddedToken object {"content": ...}.
std::optional<AddedToken> config_token(const Json& j, bool special) {
  AddedToken t;
  t.special = special;
  if (j.is_string()) {
    t.text = j.get<std::string>();
  } else if (j.is_object() && j.contains("content")) {
    t.text = j["content"].get<std::string>();
    t.special = special || j.value("special", false);
    t.single_word = j.value("single_word", false);
    t.lstrip = j.value("lstrip", false);
    t.rstrip = j.value("rstrip", false);
    t.normalized = j.value("normalized", !t.special);
    return t;
  } else {
    return std::nullopt;
  }
  t.normalized = !special;
  return t;
}

AddedToken json_added_token(const Json& j) {
  AddedToken t;
  t.text = j.at("content").get<std::string>();
  t.special = j.value("special", false);
  t.single_word = j.value("single_word", false);
  t.lstrip = j.value("lstrip", false);
  t.rstrip = j.value("rstrip", false);
  t.normalized = j.value("normalized", !t.special);
  return t;
}

void load_tokenizer_json(Pipeline& p, const Json& tj, bool gpt2_class, const Json& config) {
  const std::string& f = p.tokenizer_file;
  p.model = tokenizer_detail::BpeModel::parse(tj.at("model"), f + ": model");
  p.post = tokenizer_detail::PostProcessor::parse(tj.value("post_processor", Json()), f + ": post_processor");
  std::vector<AddedToken> added;
  std::vector<int64_t> listed_ids;
  for (const Json& t : tj.value("added_tokens", Json::array())) {
    added.push_back(json_added_token(t));
    listed_ids.push_back(t.value("id", int64_t{0}));
  }
  if (gpt2_class) {
    // transformers 5's GPT2Tokenizer keeps tokenizer.json's vocab, merges, post-processor and
    // added tokens (re-added in id order) and builds the rest itself.
    p.normalizer = tokenizer_detail::TextNormalizer::parse(Json(), f);
    p.pre_tokenizer = tokenizer_detail::PreTokenizer::byte_level(config.value("add_prefix_space", false));
    p.model.reset_to_gpt2_options();
    std::vector<size_t> order(added.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return listed_ids[a] < listed_ids[b]; });
    for (size_t i : order) p.add_token(added[i]);
  } else {
    p.normalizer =
        tokenizer_detail::TextNormalizer::parse(tj.value("normalizer", Json()), f + ": normalizer");
    p.pre_tokenizer =
        tokenizer_detail::PreTokenizer::parse(tj.value("pre_tokenizer", Json()), f + ": pre_tokenizer");
    for (AddedToken& t : added) p.add_token(std::move(t));  // ids follow the rule, not the listed ones
  }
}

// What transformers 5's tokenizer __init__ does with the config's special tokens: the named ones
// (bos..mask, extra_special_tokens' names, other "*_token" keys) are recorded, and any not yet an
// added token is added as a special token.
void load_config_tokens(Pipeline& p, const Json& config) {
  std::vector<AddedToken> to_add;
  if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
    std::vector<std::pair<int64_t, AddedToken>> decoder;
    for (const auto& kv : config["added_tokens_decoder"].items()) {
      const std::string& id = kv.key();
      if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
        throw_checkpoint("added_tokens_decoder key '" + id + "' is not a token id", p.config_file);
      decoder.emplace_back(std::stoll(id), json_added_token(kv.value()));
    }
    std::stable_sort(decoder.begin(), decoder.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& d : decoder) to_add.push_back(d.second);
  }
  std::vector<std::pair<std::string, Json>> named;
  for (const char* key :
       {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"})
    if (config.contains(key)) named.emplace_back(key, config[key]);
  const Json extra = config.contains("extra_special_tokens")
                         ? config["extra_special_tokens"]
                         : config.value("additional_special_tokens", Json());
  if (extra.is_object())
    for (const auto& kv : extra.items()) named.emplace_back(kv.key(), kv.value());
  for (const auto& kv : config.items()) {
    const std::string& key = kv.key();
    const bool listed =
        std::any_of(named.begin(), named.end(), [&](const auto& n) { return n.first == key; });
    if (!listed && key.size() > 6 && key.compare(key.size() - 6, 6, "_token") == 0 &&
        (kv.value().is_string() || kv.value().is_object()))
      named.emplace_back(key, kv.value());
  }
  for (const auto& [name, value] : named) {
    auto t = config_token(value, true);
    if (!t) continue;
    if (!p.special_tokens.count(name)) p.special_tokens[name] = t->text;
    to_add.push_back(*t);
  }
  if (extra.is_array())
    for (const Json& v : extra)
      if (auto t = config_token(v, true)) to_add.push_back(*t);
  for (AddedToken& t : to_add) p.add_token(std::move(t));
  if (config.contains("pad_token") && !config["pad_token"].is_null()) {
    auto pad = config_token(config["pad_token"], true);
    if (!pad) throw_checkpoint("pad_token is neither a string nor {\"content\": ...}", p.config_file);
    p.pad_token = pad->text;
  }
}

}  // namespace

TextTokenizer::TextTokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}

TextTokenizer TextTokenizer::from_folder(const std::filesystem::path& dir) {
  auto p = std::make_shared<Pipeline>();
  const fs::path tok_path = dir / "tokenizer.json", cfg_path = dir / "tokenizer_config.json";
  p->tokenizer_file = tok_path.string();
  p->config_file = cfg_path.string();
  const std::string fix =
      "a tokenizer folder (the VLM backbone's, e.g. vlm_model_name) holds tokenizer.json and "
      "tokenizer_config.json as transformers' tokenizer.save_pretrained(dir) writes them";
  Json config = read_json_file(cfg_path, fix);
  const Json tj = read_json_file(tok_path, fix);
  std::string current = p->config_file;
  try {
    const std::string cls = config.value("tokenizer_class", "");
    const bool gpt2 = cls == "GPT2Tokenizer" || cls == "GPT2TokenizerFast";
    if (!gpt2 && !cls.empty() && cls != "TokenizersBackend" && cls != "PreTrainedTokenizerFast")
      throw_checkpoint(
          "tokenizer_class '" + cls + "' is not supported: transformers 5 rebuilds it its own way",
          p->config_file + ": tokenizer_class",
          "lerobot.cpp reproduces TokenizersBackend / PreTrainedTokenizerFast (tokenizer.json as it "
          "is) and GPT2Tokenizer; if tokenizer.json alone is right, set tokenizer_class to "
          "\"TokenizersBackend\"");
    if (gpt2)  // GPT2Tokenizer's defaults for the tokens a config leaves out
      for (const char* key : {"bos_token", "eos_token", "unk_token"})
        if (!config.contains(key)) config[key] = "<|endoftext|>";
    current = p->tokenizer_file;
    load_tokenizer_json(*p, tj, gpt2, config);
    current = p->config_file;
    load_config_tokens(*p, config);
    p->truncate_left = config.value("truncation_side", "right") == "left";
    const bool split_special = config.value("split_special_tokens", false);
    for (size_t i = 0; i < p->added.size(); ++i) {
      const AddedToken& t = p->added[i];
      if (split_special && t.special) continue;
      if (!t.normalized) {
        p->raw_matcher.add(t.content, i);
      } else {
        std::u32string pattern = t.content;
        p->normalizer.apply(pattern);
        p->normalized_matcher.add(pattern, i);
      }
    }
  } catch (const Json::exception& e) {
    throw_checkpoint(std::string("unexpected JSON content: ") + e.what(), current,
                     "the file does not look like one transformers/tokenizers wrote");
  }
  p->vocab_size = static_cast<int64_t>(p->model.vocab().size());
  for (const AddedToken& t : p->added)
    if (!p->model.token_id(t.text)) ++p->vocab_size;
  if (p->pad_token && !p->find_id(*p->pad_token))
    throw_checkpoint("pad_token '" + *p->pad_token + "' is not a token of the tokenizer", p->config_file);
  return TextTokenizer(std::move(p));
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
