// Column chunk decoding: page loop, CRC checks, decompression, levels, PLAIN/dictionary values,
// and assembly of repetition/definition levels into list offsets.
#include "lerobot/io/parquet/column_reader.h"

#include <algorithm>
#include <atomic>

#include "lerobot/io/parquet/compression.h"
#include "lerobot/io/parquet/format_error.h"

namespace lerobot::parquet {

namespace {

std::atomic<int64_t> g_max_values{int64_t(1) << 31};
std::atomic<int64_t> g_max_bytes{int64_t(1) << 34};

// Decodes `n` levels in [0, max_level] from RLE data of `size` bytes into out.
void decode_levels(const uint8_t* data, size_t size, size_t n, int16_t max_level,
                   std::vector<uint32_t>* tmp, std::vector<int16_t>* out, const char* what) {
  tmp->resize(n);
  decode_rle_hybrid(data, size, bit_width_for(static_cast<uint32_t>(max_level)), n, tmp->data());
  for (size_t i = 0; i < n; ++i) {
    if ((*tmp)[i] > static_cast<uint32_t>(max_level))
      fail(std::string(what) + " level " + std::to_string((*tmp)[i]) + " exceeds the maximum " +
           std::to_string(max_level));
    out->push_back(static_cast<int16_t>((*tmp)[i]));
  }
}

// v1 levels: RLE with a 4-byte little-endian length prefix. Returns bytes consumed.
size_t decode_levels_v1(const uint8_t* data, size_t size, int32_t encoding, size_t n,
                        int16_t max_level, std::vector<uint32_t>* tmp, std::vector<int16_t>* out,
                        const char* what) {
  if (encoding != static_cast<int32_t>(Encoding::kRle))
    fail(std::string(what) + " levels use unsupported encoding " + std::to_string(encoding));
  if (size < 4) fail(std::string(what) + " levels truncated");
  uint32_t len = data[0] | (data[1] << 8) | (data[2] << 16) | (uint32_t(data[3]) << 24);
  if (len > size - 4) fail(std::string(what) + " levels length past the end of the page");
  decode_levels(data + 4, len, n, max_level, tmp, out, what);
  return 4 + len;
}

void decode_values(const uint8_t* data, size_t size, int32_t encoding, size_t count,
                   const Values* dict, std::vector<uint32_t>* tmp, Values* out) {
  if (encoding == static_cast<int32_t>(Encoding::kPlain)) {
    decode_plain(data, size, count, out);
  } else if (encoding == static_cast<int32_t>(Encoding::kPlainDictionary) ||
             encoding == static_cast<int32_t>(Encoding::kRleDictionary)) {
    if (!dict) fail("dictionary-encoded page without a dictionary page");
    if (count == 0) return;
    if (size < 1) fail("dictionary indices truncated");
    tmp->resize(count);
    decode_rle_hybrid(data + 1, size - 1, data[0], count, tmp->data());
    out->append_gather(*dict, tmp->data(), count, static_cast<size_t>(g_max_bytes.load()));
  } else {
    fail("unsupported value encoding " + std::to_string(encoding));
  }
}

size_t count_present(const std::vector<int16_t>& def, size_t from, size_t to, int16_t max_def) {
  if (max_def == 0) return to - from;
  return static_cast<size_t>(std::count(def.begin() + from, def.begin() + to, max_def));
}

}  // namespace

void set_decode_limits(int64_t max_values, int64_t max_bytes) {
  g_max_values = max_values;
  g_max_bytes = max_bytes;
}

ChunkPages scan_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc, const LeafInfo& leaf,
                             int64_t row_group_rows) {
  if (!cc.has_meta_data) fail("column chunk has no metadata");
  if (cc.external) fail("column chunk data lives in another file (unsupported)");
  const ColumnMetaData& m = cc.meta_data;
  if (m.type != leaf.type) fail("column chunk type differs from the schema");
  int64_t start = m.data_page_offset;
  if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < start) start = m.dictionary_page_offset;
  const int64_t len = m.total_compressed_size;
  if (start < 4 || len < 0 || static_cast<uint64_t>(start) > file_size ||
      static_cast<uint64_t>(len) > file_size - static_cast<uint64_t>(start))
    fail("column chunk byte range lies outside the file");
  if (m.num_values < 0 || m.num_values > g_max_values.load())
    fail("column chunk value count " + std::to_string(m.num_values) + " out of range");
  if (leaf.max_rep == 0 && m.num_values != row_group_rows)
    fail("column chunk has " + std::to_string(m.num_values) + " values for " +
         std::to_string(row_group_rows) + " rows");
  ChunkPages out;
  const size_t total = static_cast<size_t>(m.num_values);
  size_t levels = 0;
  size_t pos = static_cast<size_t>(start);
  const size_t end = pos + static_cast<size_t>(len);
  while (levels < total) {
    if (pos >= end) fail("column chunk ends before all of its values were read");
    size_t consumed = 0;
    PageRef p;
    p.header = parse_page_header(file + pos, end - pos, &consumed);
    pos += consumed;
    const PageHeader& h = p.header;
    const size_t psize = static_cast<size_t>(h.compressed_page_size);
    if (psize > end - pos) fail("page extends past the end of the column chunk");
    p.body = pos;
    pos += psize;
    if (h.type == PageType::kDictionaryPage) {
      if (!h.has_dict) fail("dictionary page without its header");
      if (out.has_dict || levels > 0) fail("unexpected second dictionary page");
      if (h.dict.num_values < 0) fail("negative dictionary size");
      out.dict = p;
      out.has_dict = true;
      continue;
    }
    if (h.type != PageType::kDataPage && h.type != PageType::kDataPageV2) continue;  // index pages
    const bool v2 = h.type == PageType::kDataPageV2;
    if (v2 ? !h.has_data_v2 : !h.has_data) fail("data page without its header");
    const int32_t nv = v2 ? h.data_v2.num_values : h.data.num_values;
    if (nv < 0 || static_cast<size_t>(nv) > total - levels)
      fail("page value count " + std::to_string(nv) + " exceeds the column chunk's count");
    p.first_level = levels;
    p.num_levels = static_cast<size_t>(nv);
    levels += p.num_levels;
    out.data.push_back(p);
  }
  return out;
}

Values decode_dictionary(const uint8_t* file, const ColumnChunk& cc, const LeafInfo& leaf, const PageRef& p) {
  const PageHeader& h = p.header;
  const size_t psize = static_cast<size_t>(h.compressed_page_size);
  if (h.has_crc && crc32_of(file + p.body, psize) != h.crc) fail("page CRC mismatch (corrupt page)");
  std::vector<uint8_t> buf;
  decompress(cc.meta_data.codec, file + p.body, psize, static_cast<size_t>(h.uncompressed_page_size), &buf);
  Values dict;
  dict.reset(leaf.type, leaf.type_length);
  decode_plain(buf.data(), buf.size(), static_cast<size_t>(h.dict.num_values), &dict);
  return dict;
}

void decode_data_page(const uint8_t* file, const ColumnChunk& cc, const LeafInfo& leaf, const PageRef& p,
                      const Values* dict, ChunkData* out) {
  const PageHeader& h = p.header;
  const Codec codec = cc.meta_data.codec;
  const size_t psize = static_cast<size_t>(h.compressed_page_size);
  const uint8_t* page = file + p.body;
  if (h.has_crc && crc32_of(page, psize) != h.crc) fail("page CRC mismatch (corrupt page)");
  const size_t usize = static_cast<size_t>(h.uncompressed_page_size);
  const bool v2 = h.type == PageType::kDataPageV2;
  const size_t n = p.num_levels;
  const size_t level0 = out->num_levels;
  std::vector<uint8_t> buf;
  std::vector<uint32_t> tmp;
  const uint8_t* vals;
  size_t vsize;
  int32_t encoding;
  if (!v2) {
    decompress(codec, page, psize, usize, &buf);
    size_t q = 0;
    if (leaf.max_rep > 0)
      q += decode_levels_v1(buf.data(), buf.size(), h.data.repetition_level_encoding, n, leaf.max_rep, &tmp,
                            &out->rep, "repetition");
    if (leaf.max_def > 0)
      q += decode_levels_v1(buf.data() + q, buf.size() - q, h.data.definition_level_encoding, n, leaf.max_def,
                            &tmp, &out->def, "definition");
    vals = buf.data() + q;
    vsize = buf.size() - q;
    encoding = h.data.encoding;
  } else {
    const auto& d = h.data_v2;
    if (d.repetition_levels_byte_length < 0 || d.definition_levels_byte_length < 0)
      fail("negative level section length");
    const size_t rl = static_cast<size_t>(d.repetition_levels_byte_length);
    const size_t dl = static_cast<size_t>(d.definition_levels_byte_length);
    if (rl > psize || dl > psize - rl) fail("level sections longer than the page");
    if (leaf.max_rep > 0) decode_levels(page, rl, n, leaf.max_rep, &tmp, &out->rep, "repetition");
    if (leaf.max_def > 0) decode_levels(page + rl, dl, n, leaf.max_def, &tmp, &out->def, "definition");
    if (usize < rl + dl) fail("uncompressed page size smaller than its level sections");
    if (d.is_compressed && codec != Codec::kUncompressed) {
      decompress(codec, page + rl + dl, psize - rl - dl, usize - rl - dl, &buf);
    } else {
      if (psize != usize) fail("uncompressed page size differs from its stored size");
      buf.assign(page + rl + dl, page + psize);
    }
    vals = buf.data();
    vsize = buf.size();
    encoding = d.encoding;
  }
  out->num_levels += n;
  const size_t present = count_present(out->def, level0, out->num_levels, leaf.max_def);
  decode_values(vals, vsize, encoding, present, dict, &tmp, &out->values);
}

ChunkData read_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc,
                            const LeafInfo& leaf, int64_t row_group_rows) {
  const ChunkPages pages = scan_column_chunk(file, file_size, cc, leaf, row_group_rows);
  ChunkData out;
  out.values.reset(leaf.type, leaf.type_length);
  Values dict;
  if (pages.has_dict) dict = decode_dictionary(file, cc, leaf, pages.dict);
  for (const PageRef& p : pages.data) decode_data_page(file, cc, leaf, p, pages.has_dict ? &dict : nullptr, &out);
  const size_t total = out.num_levels;
  if (leaf.max_rep > 0) {
    if (total > 0 && out.rep[0] != 0) fail("first repetition level is not 0");
    out.num_rows = std::count(out.rep.begin(), out.rep.end(), int16_t(0));
  } else {
    out.num_rows = static_cast<int64_t>(total);
  }
  if (out.num_rows != row_group_rows)
    fail("column chunk holds " + std::to_string(out.num_rows) + " rows, the row group says " +
         std::to_string(row_group_rows));
  return out;
}

void assemble_rows(const ChunkData& chunk, const LeafInfo& leaf, int64_t row_begin, int64_t row_end,
                   Assembled* out, size_t* value_first, size_t* value_count) {
  const int R = leaf.max_rep;
  const int16_t D = leaf.max_def;
  size_t lb = static_cast<size_t>(row_begin), le = static_cast<size_t>(row_end);
  if (R > 0) {  // map row numbers to level positions
    int64_t row = -1;
    lb = le = chunk.num_levels;
    for (size_t i = 0; i < chunk.num_levels; ++i) {
      if (chunk.rep[i] == 0) {
        ++row;
        if (row == row_begin) lb = i;
        if (row == row_end) { le = i; break; }
      }
    }
  }
  if (lb > le || le > chunk.num_levels) fail("row range outside the column chunk");
  *value_first = count_present(chunk.def, 0, lb, D);
  *value_count = count_present(chunk.def, lb, le, D);
  if (out->offsets.size() != static_cast<size_t>(R)) out->offsets.assign(R, std::vector<int64_t>{0});
  for (size_t i = lb; i < le; ++i) {
    const int r = R ? chunk.rep[i] : 0;
    const int16_t d = D ? chunk.def[i] : D;
    if (r == 0) ++out->num_rows;
    bool slot = true;
    for (int k = std::max(r - 1, 0); k < R; ++k) {
      if (k >= r) out->offsets[k].push_back(out->offsets[k].back());  // a new list starts
      if (d < leaf.elem_def[k]) {
        slot = false;
        break;
      }
      ++out->offsets[k].back();
    }
    if (slot) {
      out->valid.push_back(d == D);
      ++out->num_slots;
    }
  }
}

}  // namespace lerobot::parquet
