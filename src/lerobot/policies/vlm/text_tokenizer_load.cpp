// Loading a tokenizer folder as transformers 5's AutoTokenizer does: tokenizer.json as it is
// (TokenizersBackend / PreTrainedTokenizerFast) or rebuilt the way the config's tokenizer_class
// rebuilds it (GPT2Tokenizer, GemmaTokenizer), then the config's added and special tokens.
#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/vlm/text_tokenizer_pipeline.h"

namespace lerobot::tokenizer_detail {
namespace {

// tokenizer.json is read as nlohmann::json (keys sorted, logarithmic lookup): its vocab object
// has up to ~260k keys, which the insertion-ordered Json inserts in quadratic time (PaliGemma's:
// minutes). tokenizer_config.json keeps its key order (Json): special tokens are added in it.
template <typename J>
J read_json_file(const fs::path& path, const std::string& fix) {
  if (!fs::exists(path)) throw_checkpoint(path.filename().string() + " is missing", path.string(), fix);
  try {
    return J::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw_checkpoint(std::string("not valid JSON: ") + e.what(), path.string());
  }
}

// A (small) section of tokenizer.json as Json, or null.
Json section(const nlohmann::json& tj, const char* key) {
  return tj.contains(key) ? Json::parse(tj[key].dump()) : Json();
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

template <typename J>
AddedToken json_added_token(const J& j) {
  AddedToken t;
  t.text = j.at("content").template get<std::string>();
  t.special = j.value("special", false);
  t.single_word = j.value("single_word", false);
  t.lstrip = j.value("lstrip", false);
  t.rstrip = j.value("rstrip", false);
  t.normalized = j.value("normalized", !t.special);
  return t;
}

// The classes transformers 5 rebuilds from tokenizer.json's vocab and merges instead of running
// the file's own pipeline.
enum class Rebuild { kNone, kGpt2, kGemma };

void load_tokenizer_json(Pipeline& p, const nlohmann::json& tj, Rebuild rebuild, const Json& config) {
  const std::string& f = p.tokenizer_file;
  p.model = BpeModel::parse(tj.at("model"), f + ": model");
  p.post = PostProcessor::parse(section(tj, "post_processor"), f + ": post_processor");
  std::vector<AddedToken> added;
  std::vector<int64_t> listed_ids;
  for (const nlohmann::json& t : tj.value("added_tokens", nlohmann::json::array())) {
    added.push_back(json_added_token(t));
    listed_ids.push_back(t.value("id", int64_t{0}));
  }
  if (rebuild == Rebuild::kNone) {
    p.normalizer = TextNormalizer::parse(section(tj, "normalizer"), f + ": normalizer");
    p.pre_tokenizer = PreTokenizer::parse(section(tj, "pre_tokenizer"), f + ": pre_tokenizer");
    for (AddedToken& t : added) p.add_token(std::move(t));  // ids follow the rule, not the listed ones
    return;
  }
  // The rebuilt classes keep tokenizer.json's vocab, merges, post-processor and added tokens
  // (re-added in id order) and build the rest themselves.
  if (rebuild == Rebuild::kGpt2) {
    p.normalizer = TextNormalizer::parse(Json(), f);
    p.pre_tokenizer = PreTokenizer::byte_level(config.value("add_prefix_space", false));
    p.model.reset_to_gpt2_options();
  } else {
    // GemmaTokenizer: spaces become "\u2581" (no prefix is added); its Split on " " then finds
    // none, so each piece between added tokens is one BPE word; BPE with byte fallback and a
    // fused unk.
    const std::string where = f + " (as transformers' GemmaTokenizer rebuilds it)";
    p.normalizer = TextNormalizer::parse(
        Json{{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}, where);
    p.pre_tokenizer = PreTokenizer::parse(Json{{"type", "Split"},
                                               {"pattern", {{"String", " "}}},
                                               {"behavior", "MergedWithPrevious"},
                                               {"invert", false}},
                                          where);
    const auto unk = config_token(config.at("unk_token"), true);
    if (!unk) throw_checkpoint("unk_token is neither a string nor {\"content\": ...}", p.config_file);
    p.model.reset_to_gemma_options(unk->text);
  }
  std::vector<size_t> order(added.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return listed_ids[a] < listed_ids[b]; });
  for (size_t i : order) p.add_token(added[i]);
}

// TokenizersBackend.update_post_processor, which GemmaTokenizer's load runs when the config sets
// add_bos_token or add_eos_token: "[bos] $A [eos]" with the config's tokens.
void gemma_post_processor(Pipeline& p, const Json& config) {
  if (!config.contains("add_bos_token") && !config.contains("add_eos_token")) return;  // tokenizer.json's
  Json single = Json::array(), specials = Json::object();
  auto special = [&](const char* name) {
    const auto named = p.special_tokens.find(name);
    if (named == p.special_tokens.end()) return;  // a null token: transformers drops it from the template
    const std::string& text = named->second;
    const auto id = p.find_id(text);
    if (!id)
      throw_checkpoint(std::string(name) + " '" + text + "' is not a token of the tokenizer", p.config_file);
    single.push_back({{"SpecialToken", {{"id", text}, {"type_id", 0}}}});
    specials[text] = {{"id", text}, {"ids", Json::array({*id})}, {"tokens", Json::array({text})}};
  };
  if (config.value("add_bos_token", false)) special("bos_token");
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (config.value("add_eos_token", false)) special("eos_token");
  p.post = PostProcessor::parse(
      Json{{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", specials}},
      p.config_file + ": add_bos_token/add_eos_token");
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

std::shared_ptr<Pipeline> load_pipeline(const std::filesystem::path& dir) {
  auto p = std::make_shared<Pipeline>();
  const fs::path tok_path = dir / "tokenizer.json", cfg_path = dir / "tokenizer_config.json";
  p->tokenizer_file = tok_path.string();
  p->config_file = cfg_path.string();
  const std::string fix =
      "a tokenizer folder (the VLM backbone's, e.g. vlm_model_name) holds tokenizer.json and "
      "tokenizer_config.json as transformers' tokenizer.save_pretrained(dir) writes them";
  Json config = read_json_file<Json>(cfg_path, fix);
  const auto tj = read_json_file<nlohmann::json>(tok_path, fix);
  std::string current = p->config_file;
  try {
    const std::string cls = config.value("tokenizer_class", "");
    Rebuild rebuild = Rebuild::kNone;
    if (cls == "GPT2Tokenizer" || cls == "GPT2TokenizerFast")
      rebuild = Rebuild::kGpt2;
    else if (cls == "GemmaTokenizer" || cls == "GemmaTokenizerFast")
      rebuild = Rebuild::kGemma;
    else if (!cls.empty() && cls != "TokenizersBackend" && cls != "PreTrainedTokenizerFast")
      throw_checkpoint(
          "tokenizer_class '" + cls + "' is not supported: transformers 5 rebuilds it its own way",
          p->config_file + ": tokenizer_class",
          "lerobot.cpp reproduces TokenizersBackend / PreTrainedTokenizerFast (tokenizer.json as it "
          "is), GPT2Tokenizer and GemmaTokenizer; if tokenizer.json alone is right, set "
          "tokenizer_class to \"TokenizersBackend\"");
    // The class's defaults for the tokens a config leaves out.
    if (rebuild == Rebuild::kGpt2)
      for (const char* key : {"bos_token", "eos_token", "unk_token"})
        if (!config.contains(key)) config[key] = "<|endoftext|>";
    if (rebuild == Rebuild::kGemma)
      for (const auto& [key, token] : {std::pair<const char*, const char*>{"unk_token", "<unk>"},
                                       {"bos_token", "<bos>"},
                                       {"eos_token", "<eos>"},
                                       {"pad_token", "<pad>"},
                                       {"mask_token", "<mask>"}})
        if (!config.contains(key)) config[key] = token;
    current = p->tokenizer_file;
    load_tokenizer_json(*p, tj, rebuild, config);
    current = p->config_file;
    load_config_tokens(*p, config);
    if (rebuild == Rebuild::kGemma) gemma_post_processor(*p, config);
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
  } catch (const nlohmann::json::exception& e) {
    throw_checkpoint(std::string("unexpected JSON content: ") + e.what(), current,
                     "the file does not look like one transformers/tokenizers wrote");
  }
  p->vocab_size = static_cast<int64_t>(p->model.vocab().size());
  for (const AddedToken& t : p->added)
    if (!p->model.token_id(t.text)) ++p->vocab_size;
  if (p->pad_token && !p->find_id(*p->pad_token))
    throw_checkpoint("pad_token '" + *p->pad_token + "' is not a token of the tokenizer", p->config_file);
  return p;
}

}  // namespace lerobot::tokenizer_detail
