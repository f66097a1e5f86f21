// Decodes one column chunk (one leaf column of one row group) into levels and values, and
// assembles levels into list offsets (Dremel record shredding undone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lerobot/io/parquet/encoding.h"
#include "lerobot/io/parquet/metadata.h"
#include "lerobot/io/parquet/schema.h"

namespace lerobot::parquet {

struct ChunkData {
  size_t num_levels = 0;
  std::vector<int16_t> def, rep;  // empty when the max level is 0
  Values values;                  // non-null leaf values only
  int64_t num_rows = 0;
};

// Upper bounds on the level count and the decoded value bytes of one column chunk (guards
// allocations on hostile input). Defaults: 2^31 levels, 16 GiB.
void set_decode_limits(int64_t max_values, int64_t max_bytes);

// Where one page of a column chunk lies (body: file offset of its bytes) and which levels it holds.
struct PageRef {
  PageHeader header;
  size_t body = 0;
  size_t first_level = 0, num_levels = 0;  // data pages only
};
struct ChunkPages {
  std::vector<PageRef> data;  // data pages in order
  bool has_dict = false;
  PageRef dict;
};

// The chunk's pages from their headers alone (no page body is read): lets a reader decode only
// the pages that hold the rows it wants (e.g. one PNG of an image column).
ChunkPages scan_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc,
                             const LeafInfo& leaf, int64_t row_group_rows);
// The decoded dictionary page; checks its CRC when present.
Values decode_dictionary(const uint8_t* file, const ColumnChunk& cc, const LeafInfo& leaf, const PageRef& p);
// Appends one data page's levels and values to `out`; checks its CRC when present.
void decode_data_page(const uint8_t* file, const ColumnChunk& cc, const LeafInfo& leaf, const PageRef& p,
                      const Values* dict, ChunkData* out);

// Reads every page of the chunk from the file bytes; checks page CRCs when present.
ChunkData read_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc,
                            const LeafInfo& leaf, int64_t row_group_rows);

// Levels turned into nested offsets, appended across calls.
struct Assembled {
  std::vector<std::vector<int64_t>> offsets;  // per list level; each starts with {0}
  std::vector<uint8_t> valid;                 // one per leaf slot
  int64_t num_rows = 0;
  size_t num_slots = 0;
};

// Appends rows [row_begin, row_end) of `chunk` to `out`; sets *value_first/*value_count to the
// range of chunk.values those rows use.
void assemble_rows(const ChunkData& chunk, const LeafInfo& leaf, int64_t row_begin, int64_t row_end,
                   Assembled* out, size_t* value_first, size_t* value_count);

}  // namespace lerobot::parquet
