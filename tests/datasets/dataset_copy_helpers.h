// Copies of dataset files for tests: the columns of a Parquet file, whatever their types and list
// depths, into a new file with other row groups; and the v2.1 form of a v3.0 dataset, as LeRobot's
// v2.1 writer laid it out (one data file per episode, JSONL metadata, per-episode stats).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/parquet/parquet_writer.h"

namespace lerobot::testing {

// The writer's field for column `name` of `f` (scalar, list of any depth, string, image struct).
ParquetField field_of(const ParquetFile& f, const std::string& name);
// Copies rows `rr` of column `f` from `src` into `rows`.
void copy_any(const ParquetFile& src, const ParquetField& f, RowRange rr, ParquetRowGroup& rows);
// [begin, end) of the values of row `row` of a column (through every list level).
std::pair<int64_t, int64_t> row_values(const std::vector<std::vector<int64_t>>& offsets, int64_t row);

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
