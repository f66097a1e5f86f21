// String helpers (see strings.h).
#include "lerobot/common/strings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lerobot {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 2) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    // A candidate that ends with the word ("chunk_size" vs "policy.chunk_size") is a near miss.
    if (d >= best_d && ends_with(c, "." + std::string(word))) d = 1;
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string format_big_number(double n, int precision) {
  const char* suffixes[] = {"", "K", "M", "B", "T", "Q"};
  int i = 0;
  while (std::fabs(n) >= 1000.0 && i < 5) {
    n /= 1000.0;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f%s", precision, n, suffixes[i]);
  return buf;
}

}  // namespace lerobot
