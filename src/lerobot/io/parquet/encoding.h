// Parquet value and level encodings: RLE/bit-packed hybrid (levels, dictionary indices), PLAIN
// decoding into a type-erased value buffer, and the encoders the writer needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/io/parquet/metadata.h"

namespace lerobot::parquet {

// Decoded leaf values of one physical type. Fixed-width types (bool stored as one byte per value,
// FIXED_LEN_BYTE_ARRAY as type_length bytes) live in `data`; BYTE_ARRAY values are concatenated in
// `data` with `offsets` (count + 1 entries).
struct Values {
  Type type = Type::kInt32;
  int32_t width = 4;  // bytes per fixed-width value; 0 for BYTE_ARRAY
  size_t count = 0;
  std::vector<uint8_t> data;
  std::vector<uint64_t> offsets{0};

  void reset(Type t, int32_t type_length);
  // Appends values [first, first + n) of `src` (same type).
  void append_range(const Values& src, size_t first, size_t n);
  // Appends src[index[i]] for each i; every index must be < src.count and the result must stay
  // within max_bytes of data (both checked before anything is copied).
  void append_gather(const Values& src, const uint32_t* index, size_t n, size_t max_bytes);
};

// Byte width of a physical type's fixed-width value (0 for BYTE_ARRAY).
int32_t value_width(Type t, int32_t type_length);

// Decodes `count` values of the RLE/bit-packed hybrid encoding (no length prefix) from
// [data, data + size) into out[0..count). Throws FormatError on malformed input.
void decode_rle_hybrid(const uint8_t* data, size_t size, int bit_width, size_t count, uint32_t* out);

// Decodes `count` PLAIN values from [data, data + size), appending to `out`; returns bytes used.
size_t decode_plain(const uint8_t* data, size_t size, size_t count, Values* out);

// Bits needed to store values in [0, max_value].
int bit_width_for(uint32_t max_value);

// RLE/bit-packed hybrid encoding of `values` (no length prefix) appended to `out`.
void encode_rle_hybrid(const uint32_t* values, size_t count, int bit_width, std::string* out);

}  // namespace lerobot::parquet
