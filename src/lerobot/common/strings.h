// Small string helpers: split/join/trim, edit distance and "did you mean" suggestions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lerobot {

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` by edit distance (ties: first), or "" when none is within
// max(2, |word|/2) edits.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// Human-readable number: 1234 -> "1K", 2500000 -> "2M" (LeRobot's format_big_number).
std::string format_big_number(double n, int precision = 0);

}  // namespace lerobot
