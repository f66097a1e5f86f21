// Seeded corruptions of dataset files for the mutation test (test_meta_mutations.cpp): bit flips,
// truncation, zeroed and duplicated spans of any file; values of the wrong length or type, removed
// keys and duplicated or dropped lines of JSON/JSONL; columns of the wrong type, rows of the wrong
// length and out-of-range values of Parquet. Also the v2.1 form of a v3.0 dataset, as LeRobot's
// v2.1 writer lays it out (one data file per episode, JSONL metadata, per-episode stats).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/parquet_file.h"

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

// Copies the rows of `ranges` of a data parquet into `dst` (every column, the key-value metadata),
// one row group per range; `edit` may change an image bytes column of each row group.
void copy_data_rows(const ParquetFile& src, const fs::path& dst, const std::vector<RowRange>& ranges,
                    const std::function<void(int64_t first_row, ParquetColumn<std::string>&)>& edit = {});

// Writes the v2.1 form of the v3.0 dataset at `v3` (one file per data chunk) to `dst`: data files
// split per episode, info.json's v2.1 paths, tasks/episodes/episodes_stats JSONL from the v3.0
// tables (per-episode stats from its stats/* columns), no stats.json (so v2.1 readers aggregate the
// episode stats), no videos.
void write_v21_copy(const fs::path& v3, const fs::path& dst);

}  // namespace lerobot::testing
