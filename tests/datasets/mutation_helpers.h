// Seeded corruptions of dataset files for the mutation test (test_meta_mutations.cpp): bit flips,
// truncation, zeroed and duplicated spans of any file; values of the wrong length or type, removed
// keys and duplicated or dropped lines of JSON/JSONL; columns of the wrong type, rows of the wrong
// length and out-of-range values of Parquet.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"

namespace lerobot::testing {

// Draws in [0, n): the same on every platform (std::uniform_int_distribution is not).
inline uint64_t draw(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

// Corrupts the bytes of a file's content; returns what it did.
std::string mutate_bytes(std::string& bytes, std::mt19937_64& rng);
// A structural edit of JSON (.json) or JSON Lines (.jsonl) text; returns what it did.
std::string mutate_json_text(std::string& text, bool lines, std::mt19937_64& rng);
// Rewrites a Parquet file with one column or row changed; returns what it did.
std::string mutate_parquet_columns(const fs::path& file, std::mt19937_64& rng);
// Picks one of the above for `file` by its kind and applies it in place.
std::string mutate_file(const fs::path& file, std::mt19937_64& rng);

}  // namespace lerobot::testing
