// Command-line flags with draccus semantics: --a.b.c=value (or --a.b.c value), --config_path=FILE
// applied first, then `.type` flags, then the rest in order. --help prints every flag.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"

namespace lerobot {

struct Flag {
  std::string key;    // dotted, without leading dashes
  std::string value;
};

// Splits argv-style words into flags; a word that is not a flag is a usage error.
std::vector<Flag> parse_flag_words(const std::vector<std::string>& words);

// Removes and returns the value of flag `key` (the last one wins), or "" with found=false.
std::string take_flag(std::vector<Flag>& flags, const std::string& key, bool* found = nullptr);

// Applies one flag; unknown keys name the flag and suggest the nearest valid one.
void apply_flag(Config& root, const Flag& flag);

// --config_path (if present) first, then `.type` flags by depth, then the others in order.
// Validates the root at the end.
void apply_flags(Config& root, std::vector<Flag> flags);

// Every dotted flag path currently reachable (choice sub-fields of the selected types only).
std::vector<std::string> flag_paths(Config& root);

// Prints "--path=<type>  help (default: value)" for every field, and for every registered type of
// every choice field its own fields.
void print_help(Config& root, std::ostream& os);

}  // namespace lerobot
