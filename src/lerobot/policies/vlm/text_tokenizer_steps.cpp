// The normalizers and the pre-tokenizers of TextTokenizer, following `tokenizers` 0.23
// (normalizers/*.rs, pre_tokenizers/*.rs, NormalizedString::split) step for step.
#include "lerobot/policies/vlm/text_tokenizer_steps.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "lerobot/common/error.h"
#include "lerobot/policies/vlm/unicode_classes.h"

namespace lerobot::tokenizer_detail {
namespace {

// GPT-2's pre-tokenization regex, the one ByteLevel uses and the only Split regex supported.
constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", v);
  return buf;
}

// GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to 256 + n.
const std::array<char32_t, 256>& byte_alphabet() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

// The end of GPT-2's regex match starting at i (< s.size()); its alternatives tried in order.
size_t gpt2_match_end(const std::u32string& s, size_t i) {
  const size_t n = s.size();
  if (s[i] == U'\'' && i + 1 < n) {
    const char32_t d = s[i + 1];
    if (d == U's' || d == U't' || d == U'm' || d == U'd') return i + 2;
    if (i + 2 < n) {
      const char32_t e = s[i + 2];
      if ((d == U'r' && e == U'e') || (d == U'v' && e == U'e') || (d == U'l' && e == U'l')) return i + 3;
    }
  }
  // 0: \s, 1: \p{L}, 2: \p{N}, 3: anything else.
  auto cls = [](char32_t c) {
    return unicode::is_letter(c) ? 1 : unicode::is_number(c) ? 2 : unicode::is_whitespace(c) ? 0 : 3;
  };
  size_t k = i;
  if (s[k] == U' ' && k + 1 < n && cls(s[k + 1]) != 0) ++k;  // ` ?` before a letter/number/other run
  const int kc = cls(s[k]);
  if (kc != 0) {
    size_t e = k + 1;
    while (e < n && cls(s[e]) == kc) ++e;
    return e;
  }
  size_t e = i;
  while (e < n && unicode::is_whitespace(s[e])) ++e;
  // \s+(?!\S): the run less its last character when a non-space follows; else \s+ takes it all.
  if (e == n || e - i == 1) return e;
  return e - 1;
}

bool is_plain_literal(const std::string& regex) {
  return regex.find_first_of("\\.^$|?*+()[]{}") == std::string::npos;
}

struct Span {
  size_t start, end;
  bool match;
};

}  // namespace

// ---- normalizer ----------------------------------------------------------------------------

TextNormalizer TextNormalizer::parse(const Json& j, const std::string& where) {
  TextNormalizer n;
  n.where_ = where;
  if (!j.is_null()) n.add(j, where);
  return n;
}

void TextNormalizer::add(const Json& j, const std::string& where) {
  const std::string type = j.value("type", "");
  auto literal = [&](const Json& pattern) {
    if (pattern.contains("String")) return pattern["String"].get<std::string>();
    const std::string regex = pattern.value("Regex", "");
    if (!pattern.contains("Regex") || !is_plain_literal(regex))
      throw_checkpoint(
          "unsupported Replace pattern " + pattern.dump(), where,
          "lerobot.cpp's Replace normalizer takes a String pattern or a Regex without metacharacters");
    return regex;
  };
  if (type == "Sequence") {
    const Json& list = j.at("normalizers");
    for (size_t i = 0; i < list.size(); ++i) add(list[i], where + ".normalizers[" + std::to_string(i) + "]");
  } else if (type == "NFC") {
    steps_.push_back({Kind::kNfc, {}, {}});
  } else if (type == "Lowercase") {
    steps_.push_back({Kind::kLowercase, {}, {}});
  } else if (type == "Strip") {
    steps_.push_back({Kind::kStrip, {}, {}, j.value("strip_left", true), j.value("strip_right", true)});
  } else if (type == "Prepend") {
    steps_.push_back({Kind::kPrepend, decode_utf8(j.at("prepend").get<std::string>(), where), {}});
  } else if (type == "Replace") {
    steps_.push_back({Kind::kReplace, decode_utf8(literal(j.at("pattern")), where),
                      decode_utf8(j.at("content").get<std::string>(), where)});
  } else {
    throw_checkpoint(
        "unsupported normalizer type '" + type + "'", where,
        "lerobot.cpp's text tokenizer supports the normalizers NFC, Lowercase, Strip, Prepend, Replace "
        "and Sequence (or null)");
  }
}

void TextNormalizer::apply(std::u32string& s) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::kNfc:
        for (char32_t c : s)
          if (unicode::is_nfc_unsafe(c))
            throw_data(
                "text holds " + hex(c) + ", which NFC normalization could change", where_,
                "lerobot.cpp's NFC normalizer takes text already in NFC without combining marks; compose "
                "the text first (e.g. use the precomposed letter)");
        break;
      case Kind::kLowercase: {
        std::u32string out;
        out.reserve(s.size());
        for (char32_t c : s) unicode::append_lowercase(c, out);
        s = std::move(out);
        break;
      }
      case Kind::kStrip: {
        size_t b = 0, e = s.size();
        while (step.left && b < e && unicode::is_whitespace(s[b])) ++b;
        while (step.right && e > b && unicode::is_whitespace(s[e - 1])) --e;
        s = s.substr(b, e - b);
        break;
      }
      case Kind::kPrepend:
        if (!s.empty()) s = step.a + s;
        break;
      case Kind::kReplace: {
        if (step.a.empty()) break;
        std::u32string out;
        size_t pos = 0;
        for (size_t hit; (hit = s.find(step.a, pos)) != std::u32string::npos; pos = hit + step.a.size())
          out.append(s, pos, hit - pos).append(step.b);
        s = out.append(s, pos, std::u32string::npos);
        break;
      }
    }
  }
}

// ---- pre-tokenizer -------------------------------------------------------------------------

PreTokenizer PreTokenizer::parse(const Json& j, const std::string& where) {
  PreTokenizer p;
  if (!j.is_null()) p.add(j, where);
  return p;
}

PreTokenizer PreTokenizer::byte_level(bool add_prefix_space) {
  PreTokenizer p;
  Step s;  // ByteLevel unless set below
  s.add_prefix_space = add_prefix_space;
  p.steps_.push_back(s);
  return p;
}

void PreTokenizer::add(const Json& j, const std::string& where) {
  const std::string type = j.value("type", "");
  Step s;  // ByteLevel unless set below
  if (type == "Sequence") {
    const Json& list = j.at("pretokenizers");
    for (size_t i = 0; i < list.size(); ++i)
      add(list[i], where + ".pretokenizers[" + std::to_string(i) + "]");
    return;
  } else if (type == "ByteLevel") {
    s.add_prefix_space = j.value("add_prefix_space", true);
    s.use_regex = j.value("use_regex", true);
  } else if (type == "Digits") {
    s.kind = Kind::kDigits;
    s.individual_digits = j.value("individual_digits", false);
  } else if (type == "Split") {
    s.kind = Kind::kSplit;
    const Json& pattern = j.at("pattern");
    if (pattern.contains("String")) {
      s.literal = decode_utf8(pattern["String"].get<std::string>(), where);
    } else {
      const std::string regex = pattern.value("Regex", "");
      s.gpt2_regex = regex == kGpt2Regex;
      if (!s.gpt2_regex && (!pattern.contains("Regex") || !is_plain_literal(regex)))
        throw_checkpoint("unsupported Split pattern " + pattern.dump(), where,
                         "lerobot.cpp's Split pre-tokenizer takes a String pattern, GPT-2's regex or a regex "
                         "without metacharacters");
      if (!s.gpt2_regex) s.literal = decode_utf8(regex, where);
    }
    const std::string behavior = j.at("behavior").get<std::string>();
    static const std::pair<const char*, Behavior> kBehaviors[] = {
        {"Removed", Behavior::kRemoved},
        {"Isolated", Behavior::kIsolated},
        {"MergedWithPrevious", Behavior::kMergedWithPrevious},
        {"MergedWithNext", Behavior::kMergedWithNext},
        {"Contiguous", Behavior::kContiguous}};
    bool known = false;
    for (const auto& kv : kBehaviors)
      if (behavior == kv.first) s.behavior = kv.second, known = true;
    if (!known) throw_checkpoint("unknown Split behavior '" + behavior + "'", where);
    s.invert = j.value("invert", false);
  } else if (type == "Metaspace") {
    // tokenizers' Metaspace: prepend_scheme defaults to "always"; the older add_prefix_space
    // false means "never" (and contradicts any other scheme); split defaults to true.
    s.kind = Kind::kMetaspace;
    s.literal = decode_utf8(j.at("replacement").get<std::string>(), where + ".replacement");
    if (s.literal.size() != 1)
      throw_checkpoint("Metaspace replacement must be one character", where + ".replacement");
    const std::string scheme = j.value("prepend_scheme", "always");
    if (scheme == "always")
      s.prepend = Prepend::kAlways;
    else if (scheme == "first")
      s.prepend = Prepend::kFirst;
    else if (scheme == "never")
      s.prepend = Prepend::kNever;
    else
      throw_checkpoint("unknown Metaspace prepend_scheme '" + scheme + "'", where + ".prepend_scheme",
                       "use \"always\", \"first\" or \"never\"");
    const Json& prefix = j.contains("add_prefix_space") ? j["add_prefix_space"] : Json();
    if (prefix.is_boolean() && !prefix.get<bool>()) {
      if (s.prepend != Prepend::kNever)
        throw_checkpoint("add_prefix_space false does not match prepend_scheme '" + scheme + "'", where,
                         "tokenizers refuses this file too; set prepend_scheme to \"never\"");
      s.prepend = Prepend::kNever;
    }
    s.split = j.contains("split") && !j["split"].is_null() ? j["split"].get<bool>() : true;
    s.behavior = Behavior::kMergedWithNext;
  } else {
    throw_checkpoint("unsupported pre_tokenizer type '" + type + "'", where,
                     "lerobot.cpp's text tokenizer supports the pre-tokenizers ByteLevel, Digits, Split, "
                     "Metaspace and Sequence (or null)");
  }
  steps_.push_back(s);
}

void PreTokenizer::run(const Step& step, std::vector<std::u32string>& pieces,
                       std::vector<bool>& at_start) const {
  std::vector<std::u32string> out;
  std::vector<bool> out_at_start;
  Behavior behavior = step.behavior;
  if (step.kind == Kind::kByteLevel) behavior = Behavior::kIsolated;
  if (step.kind == Kind::kDigits)
    behavior = step.individual_digits ? Behavior::kIsolated : Behavior::kContiguous;
  for (size_t k = 0; k < pieces.size(); ++k) {
    std::u32string& piece = pieces[k];
    const bool first = at_start[k];
    if (step.kind == Kind::kByteLevel) {
      if (step.add_prefix_space && piece[0] != U' ') piece.insert(piece.begin(), U' ');
      if (!step.use_regex) {
        out.push_back(std::move(piece));
        out_at_start.push_back(first);
        continue;
      }
    }
    if (step.kind == Kind::kMetaspace) {
      // Spaces become the replacement; "first" prepends only to the piece at the text's start.
      const char32_t rep = step.literal[0];
      std::replace(piece.begin(), piece.end(), U' ', rep);
      const bool prepend = step.prepend == Prepend::kAlways || (step.prepend == Prepend::kFirst && first);
      if (prepend && piece[0] != rep) piece.insert(piece.begin(), rep);
      if (!step.split) {
        out.push_back(std::move(piece));
        out_at_start.push_back(first);
        continue;
      }
    }
    // Pattern::find_matches: spans covering the piece, each a match or the text between two.
    std::vector<Span> spans;
    const size_t n = piece.size();
    if (step.kind == Kind::kDigits) {
      size_t last = 0;
      for (size_t i = 0; i < n; ++i) {
        if (!unicode::is_number(piece[i])) continue;
        if (last < i) spans.push_back({last, i, false});
        spans.push_back({i, i + 1, true});
        last = i + 1;
      }
      if (last < n) spans.push_back({last, n, false});
    } else if (step.kind == Kind::kByteLevel || step.gpt2_regex) {
      for (size_t i = 0; i < n;) {
        const size_t e = gpt2_match_end(piece, i);
        spans.push_back({i, e, true});
        i = e;
      }
    } else if (step.literal.empty()) {
      spans.push_back({0, n, false});
    } else {
      size_t last = 0;
      for (size_t hit; (hit = piece.find(step.literal, last)) != std::u32string::npos;
           last = hit + step.literal.size()) {
        if (last < hit) spans.push_back({last, hit, false});
        spans.push_back({hit, hit + step.literal.size(), true});
      }
      if (last < n) spans.push_back({last, n, false});
    }
    if (step.invert)
      for (Span& s : spans) s.match = !s.match;
    // NormalizedString::split: the behavior decides what is kept and what is merged.
    std::vector<Span> kept;
    bool previous_match = false;
    if (behavior == Behavior::kMergedWithNext) {
      for (size_t k = spans.size(); k-- > 0;) {
        const Span& s = spans[k];
        if (s.match && !previous_match && !kept.empty())
          kept.back().start = s.start;
        else
          kept.push_back({s.start, s.end, false});
        previous_match = s.match;
      }
      std::reverse(kept.begin(), kept.end());
    } else {
      for (const Span& s : spans) {
        if (behavior == Behavior::kRemoved) {
          if (!s.match) kept.push_back(s);
        } else if (behavior == Behavior::kIsolated) {
          kept.push_back(s);
        } else if (behavior == Behavior::kMergedWithPrevious && s.match && !previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else if (behavior == Behavior::kContiguous && s.match == previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else {
          kept.push_back(s);
        }
        previous_match = s.match;
      }
    }
    for (const Span& s : kept)
      if (s.end > s.start) {
        out.push_back(piece.substr(s.start, s.end - s.start));
        out_at_start.push_back(first && s.start == 0);
      }
  }
  if (step.kind == Kind::kByteLevel) {
    const auto& alphabet = byte_alphabet();
    for (std::u32string& word : out) {
      std::u32string mapped;
      for (unsigned char b : encode_utf8(word)) mapped += alphabet[b];
      word = std::move(mapped);
    }
  }
  pieces = std::move(out);
  at_start = std::move(out_at_start);
}

std::vector<std::u32string> PreTokenizer::apply(const std::u32string& piece, bool at_text_start) const {
  std::vector<std::u32string> pieces;
  std::vector<bool> at_start;
  if (!piece.empty()) pieces.push_back(piece), at_start.push_back(at_text_start);
  for (const Step& step : steps_) run(step, pieces, at_start);
  return pieces;
}

}  // namespace lerobot::tokenizer_detail
