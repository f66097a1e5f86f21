// TextTokenizer's BPE model, added-token matcher and post-processors, following `tokenizers` 0.23
// (models/bpe/*.rs, added_vocabulary.rs, processors/*.rs): merges go lowest rank first, leftmost
// on ties.
#include <algorithm>
#include <cstdio>
#include <queue>

#include "lerobot/common/error.h"
#include "lerobot/policies/vlm/text_tokenizer_steps.h"

namespace lerobot::tokenizer_detail {

// ---- BPE -----------------------------------------------------------------------------------

BpeModel BpeModel::parse(const nlohmann::json& j, const std::string& where) {
  BpeModel m;
  m.where_ = where;
  const std::string type = j.value("type", j.contains("merges") ? "BPE" : "");
  if (type != "BPE")
    throw_checkpoint(
        "unsupported model type '" + type + "'", where,
        "lerobot.cpp's text tokenizer supports BPE models only (not WordPiece, Unigram, WordLevel)");
  if (j.contains("dropout") && !j["dropout"].is_null() && j["dropout"].get<double>() > 0.0)
    throw_checkpoint("BPE dropout is random", where + ".dropout", "set dropout to null for inference");
  for (const auto& kv : j.at("vocab").items()) m.vocab_[kv.key()] = kv.value().get<int64_t>();
  auto opt_string = [&](const char* key) -> std::optional<std::string> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    return j[key].get<std::string>();
  };
  m.unk_token_ = opt_string("unk_token");
  m.prefix_ = opt_string("continuing_subword_prefix").value_or("");
  m.suffix_ = opt_string("end_of_word_suffix").value_or("");
  m.fuse_unk_ = j.value("fuse_unk", false);
  m.byte_fallback_ = j.value("byte_fallback", false);
  m.ignore_merges_ = j.value("ignore_merges", false);

  const Json& merges = j.at("merges");
  for (size_t i = 0; i < merges.size(); ++i) {
    std::string a, b;
    if (merges[i].is_string()) {
      const std::string s = merges[i].get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos)
        throw_checkpoint("merge \"" + s + "\" is not two tokens separated by a space",
                         where + ".merges[" + std::to_string(i) + "]");
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else {
      a = merges[i].at(0).get<std::string>();
      b = merges[i].at(1).get<std::string>();
    }
    // As BpeBuilder::build: the merged token drops b's continuing-subword prefix.
    const std::string merged = a + b.substr(std::min(m.prefix_.size(), b.size()));
    const std::string* tokens[] = {&a, &b, &merged};
    for (const std::string* t : tokens)
      if (!m.vocab_.count(*t))
        throw_checkpoint("merge token '" + *t + "' is not in the vocab",
                         where + ".merges[" + std::to_string(i) + "]",
                         "the tokenizer.json is inconsistent; re-save it with the tokenizers library");
    m.merges_[pair_key(m.vocab_[a], m.vocab_[b])] = {static_cast<int32_t>(i), m.vocab_[merged]};
  }
  return m;
}

void BpeModel::reset_to_gpt2_options() {
  unk_token_.reset();
  fuse_unk_ = byte_fallback_ = ignore_merges_ = false;
  prefix_.clear();
  suffix_.clear();
}

void BpeModel::reset_to_gemma_options(const std::string& unk_token) {
  unk_token_ = unk_token;
  fuse_unk_ = byte_fallback_ = true;
  ignore_merges_ = false;
  prefix_.clear();
  suffix_.clear();
}

std::optional<int64_t> BpeModel::token_id(const std::string& token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::tokenize(const std::u32string& word, std::vector<int64_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    auto it = vocab_.find(encode_utf8(word));
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // BPE::merge_word: one symbol per character, unknown ones as unk (fused when fuse_unk) or
  // dropped when the model has no unk_token.
  std::vector<int64_t> ids;
  std::optional<int64_t> unk;
  for (size_t i = 0; i < word.size(); ++i) {
    std::string s;
    if (i > 0) s = prefix_;
    append_utf8(word[i], s);
    if (i + 1 == word.size()) s += suffix_;
    auto it = vocab_.find(s);
    if (it != vocab_.end()) {
      if (unk) ids.push_back(*unk), unk.reset();
      ids.push_back(it->second);
      continue;
    }
    if (byte_fallback_) {
      std::vector<int64_t> bytes;
      for (unsigned char b : s) {
        char code[8];
        std::snprintf(code, sizeof code, "<0x%02X>", b);
        auto bt = vocab_.find(code);
        if (bt == vocab_.end()) break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == s.size()) {  // every byte has its token (a pending unk stays pending, as in Rust)
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (!unk_token_) continue;
    auto u = vocab_.find(*unk_token_);
    if (u == vocab_.end())
      throw_checkpoint("unk_token '" + *unk_token_ + "' is not in the vocab", where_ + ".unk_token",
                       "the tokenizer.json is inconsistent; re-save it with the tokenizers library");
    if (unk && !fuse_unk_) ids.push_back(*unk);
    unk = u->second;
  }
  if (unk) ids.push_back(*unk);
  merge_all(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

void BpeModel::merge_all(std::vector<int64_t>& ids) const {
  const int n = static_cast<int>(ids.size());
  if (n < 2 || merges_.empty()) return;
  std::vector<int> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (int i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;
  struct Candidate {
    int32_t rank;
    int pos;
    int64_t new_id;
    bool operator<(const Candidate& o) const {  // a max-heap popping the lowest rank, then the leftmost
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate> queue;
  auto push = [&](int pos) {
    auto it = merges_.find(pair_key(ids[pos], ids[next[pos]]));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.new_id});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (!alive[top.pos] || next[top.pos] == -1) continue;
    const int right = next[top.pos];
    auto it = merges_.find(pair_key(ids[top.pos], ids[right]));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;  // a stale entry
    ids[top.pos] = top.new_id;
    alive[right] = false;
    next[top.pos] = next[right];
    if (next[right] != -1) prev[next[right]] = top.pos;
    if (prev[top.pos] != -1) push(prev[top.pos]);
    if (next[top.pos] != -1) push(top.pos);
  }
  std::vector<int64_t> merged;
  for (int i = 0; i < n; ++i)
    if (alive[i]) merged.push_back(ids[i]);
  ids = std::move(merged);
}

// ---- added tokens --------------------------------------------------------------------------

void TokenMatcher::add(const std::u32string& pattern, size_t token) {
  if (pattern.empty()) return;
  auto& list = by_first_[pattern[0]];
  list.emplace_back(pattern, token);
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<TokenMatcher::Match> TokenMatcher::find_all(const std::u32string& s) const {
  std::vector<Match> out;
  for (size_t i = 0; i < s.size();) {
    auto it = by_first_.find(s[i]);
    const std::pair<std::u32string, size_t>* hit = nullptr;
    if (it != by_first_.end())
      for (const auto& p : it->second)
        if (s.compare(i, p.first.size(), p.first) == 0) {
          hit = &p;
          break;
        }
    if (!hit) {
      ++i;
      continue;
    }
    out.push_back({i, i + hit->first.size(), hit->second});
    i += hit->first.size();
  }
  return out;
}

// ---- post-processor ------------------------------------------------------------------------

PostProcessor PostProcessor::parse(const Json& j, const std::string& where) {
  PostProcessor p;
  if (!j.is_null()) p.add(j, where);
  return p;
}

void PostProcessor::add(const Json& j, const std::string& where) {
  const std::string type = j.value("type", "");
  if (type == "Sequence") {
    const Json& list = j.at("processors");
    for (size_t i = 0; i < list.size(); ++i) add(list[i], where + ".processors[" + std::to_string(i) + "]");
  } else if (type == "ByteLevel") {
    // Only trims offsets; the ids are unchanged.
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    templates_.push_back({{false, {j.at("cls").at(1).get<int64_t>()}},
                          {true, {}},
                          {false, {j.at("sep").at(1).get<int64_t>()}}});
  } else if (type == "TemplateProcessing") {
    std::vector<Item> items;
    const Json& single = j.at("single");
    for (size_t i = 0; i < single.size(); ++i) {
      const Json& piece = single[i];
      const std::string at = where + ".single[" + std::to_string(i) + "]";
      if (piece.contains("Sequence")) {
        if (piece["Sequence"].value("id", "") != "A")
          throw_checkpoint("the single-sequence template uses sequence B", at,
                           "a single template uses $A only");
        items.push_back({true, {}});
      } else if (piece.contains("SpecialToken")) {
        const std::string name = piece["SpecialToken"].at("id").get<std::string>();
        const Json& specials = j.at("special_tokens");
        if (!specials.contains(name))
          throw_checkpoint("special token '" + name + "' is not in special_tokens", at);
        items.push_back({false, specials[name].at("ids").get<std::vector<int64_t>>()});
      } else {
        throw_checkpoint("unknown template piece " + piece.dump(), at);
      }
    }
    templates_.push_back(std::move(items));
  } else {
    throw_checkpoint("unsupported post_processor type '" + type + "'", where,
                     "lerobot.cpp's text tokenizer supports the post-processors TemplateProcessing, "
                     "RobertaProcessing, BertProcessing, ByteLevel and Sequence (or null)");
  }
}

std::vector<int64_t> PostProcessor::apply(const std::vector<int64_t>& ids) const {
  std::vector<int64_t> cur = ids;
  for (const auto& items : templates_) {
    std::vector<int64_t> out;
    for (const Item& item : items) {
      const auto& src = item.sequence ? cur : item.ids;
      out.insert(out.end(), src.begin(), src.end());
    }
    cur = std::move(out);
  }
  return cur;
}

int64_t PostProcessor::added_count() const {
  int64_t n = 0;
  for (const auto& items : templates_)
    for (const Item& item : items)
      if (!item.sequence) n += static_cast<int64_t>(item.ids.size());
  return n;
}

}  // namespace lerobot::tokenizer_detail
