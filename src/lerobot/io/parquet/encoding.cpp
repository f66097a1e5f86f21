// RLE/bit-packed hybrid and PLAIN codecs for Parquet pages.
#include "lerobot/io/parquet/encoding.h"

#include <cstring>

#include "lerobot/io/parquet/format_error.h"

namespace lerobot::parquet {

int32_t value_width(Type t, int32_t type_length) {
  switch (t) {
    case Type::kBoolean: return 1;
    case Type::kInt32: case Type::kFloat: return 4;
    case Type::kInt64: case Type::kDouble: return 8;
    case Type::kInt96: return 12;
    case Type::kByteArray: return 0;
    case Type::kFixedLenByteArray:
      if (type_length <= 0 || type_length > (1 << 20)) fail("bad FIXED_LEN_BYTE_ARRAY length");
      return type_length;
  }
  fail("unknown physical type");
}

void Values::reset(Type t, int32_t type_length) {
  type = t;
  width = value_width(t, type_length);
  count = 0;
  data.clear();
  offsets.assign(1, 0);
}

void Values::append_range(const Values& src, size_t first, size_t n) {
  if (first + n > src.count) fail("value range out of bounds");
  if (width) {
    data.insert(data.end(), src.data.begin() + first * width, src.data.begin() + (first + n) * width);
  } else {
    uint64_t base = data.size();
    uint64_t s0 = src.offsets[first];
    data.insert(data.end(), src.data.begin() + s0, src.data.begin() + src.offsets[first + n]);
    for (size_t i = 1; i <= n; ++i) offsets.push_back(base + src.offsets[first + i] - s0);
  }
  count += n;
}

void Values::append_gather(const Values& src, const uint32_t* index, size_t n, size_t max_bytes) {
  uint64_t bytes = data.size();
  for (size_t i = 0; i < n; ++i) {
    if (index[i] >= src.count) fail("dictionary index " + std::to_string(index[i]) + " out of range");
    bytes += width ? width : src.offsets[index[i] + 1] - src.offsets[index[i]];
  }
  if (bytes > max_bytes) fail("decoded column chunk larger than the decode limit");
  if (width) {
    size_t base = data.size();
    data.resize(base + n * width);
    uint8_t* dst = data.data() + base;
    for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * width, src.data.data() + index[i] * width, width);
  } else {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* p = src.data.data() + src.offsets[index[i]];
      data.insert(data.end(), p, p + (src.offsets[index[i] + 1] - src.offsets[index[i]]));
      offsets.push_back(data.size());
    }
  }
  count += n;
}

namespace {
uint32_t read_uleb(const uint8_t* data, size_t size, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= size) fail("RLE: truncated run header");
    uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if (v > 0xffffffffull) fail("RLE: run header too large");
      return static_cast<uint32_t>(v);
    }
  }
  fail("RLE: run header too long");
}
}  // namespace

void decode_rle_hybrid(const uint8_t* data, size_t size, int bit_width, size_t count, uint32_t* out) {
  if (bit_width < 0 || bit_width > 32) fail("RLE: bad bit width " + std::to_string(bit_width));
  if (bit_width == 0) {
    std::memset(out, 0, count * sizeof(uint32_t));
    return;
  }
  const size_t value_bytes = (bit_width + 7) / 8;
  const uint64_t mask = bit_width == 32 ? 0xffffffffull : ((1ull << bit_width) - 1);
  size_t pos = 0, done = 0;
  while (done < count) {
    uint32_t header = read_uleb(data, size, &pos);
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values
      uint64_t groups = header >> 1;
      if (groups == 0) fail("RLE: empty bit-packed run");
      uint64_t bytes = groups * bit_width;
      if (bytes > size - pos) bytes = size - pos;  // tolerate a short final group
      uint64_t avail = bytes * 8 / bit_width;
      uint64_t take = groups * 8;
      if (take > count - done) take = count - done;
      if (take > avail) fail("RLE: bit-packed run past the end of the data");
      const uint8_t* p = data + pos;
      uint64_t bit = 0;
      for (uint64_t i = 0; i < take; ++i, bit += bit_width) {
        size_t byte = bit >> 3;
        uint64_t acc = 0;
        size_t nb = std::min<uint64_t>(8, bytes - byte);
        std::memcpy(&acc, p + byte, nb);
        out[done + i] = static_cast<uint32_t>((acc >> (bit & 7)) & mask);
      }
      done += take;
      pos += bytes;
    } else {  // RLE run: (header >> 1) copies of one value
      uint64_t run = header >> 1;
      if (run == 0) fail("RLE: empty run");
      if (value_bytes > size - pos) fail("RLE: truncated run value");
      uint32_t v = 0;
      for (size_t b = 0; b < value_bytes; ++b) v |= static_cast<uint32_t>(data[pos + b]) << (8 * b);
      pos += value_bytes;
      if (v > mask) fail("RLE: run value wider than the bit width");
      uint64_t take = std::min<uint64_t>(run, count - done);
      for (uint64_t i = 0; i < take; ++i) out[done + i] = v;
      done += take;
    }
  }
}

size_t decode_plain(const uint8_t* data, size_t size, size_t count, Values* out) {
  if (out->type == Type::kBoolean) {
    if ((count + 7) / 8 > size) fail("PLAIN: boolean values past the end of the page");
    size_t base = out->data.size();
    out->data.resize(base + count);
    for (size_t i = 0; i < count; ++i) out->data[base + i] = (data[i >> 3] >> (i & 7)) & 1;
    out->count += count;
    return (count + 7) / 8;
  }
  if (out->width) {
    if (count > size / out->width) fail("PLAIN: values past the end of the page");
    size_t n = count * out->width;
    out->data.insert(out->data.end(), data, data + n);
    out->count += count;
    return n;
  }
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    if (size - pos < 4) fail("PLAIN: byte array length past the end of the page");
    uint32_t len;
    std::memcpy(&len, data + pos, 4);
    pos += 4;
    if (len > size - pos) fail("PLAIN: byte array past the end of the page");
    out->data.insert(out->data.end(), data + pos, data + pos + len);
    out->offsets.push_back(out->data.size());
    pos += len;
  }
  out->count += count;
  return pos;
}

int bit_width_for(uint32_t max_value) {
  int w = 0;
  while (w < 32 && (max_value >> w) != 0) ++w;
  return w;
}

namespace {
void put_uleb(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
}  // namespace

void encode_rle_hybrid(const uint32_t* values, size_t count, int bit_width, std::string* out) {
  if (bit_width == 0) return;
  const size_t value_bytes = (bit_width + 7) / 8;
  std::string literal;  // packed bit-packed groups not yet written
  size_t literal_groups = 0;
  auto flush = [&] {
    if (!literal_groups) return;
    put_uleb((static_cast<uint64_t>(literal_groups) << 1) | 1, out);
    *out += literal;
    literal.clear();
    literal_groups = 0;
  };
  size_t i = 0;
  while (i < count) {
    size_t run = 1;
    while (i + run < count && values[i + run] == values[i]) ++run;
    if (run >= 8) {
      flush();
      put_uleb(static_cast<uint64_t>(run) << 1, out);
      for (size_t b = 0; b < value_bytes; ++b) out->push_back(static_cast<char>(values[i] >> (8 * b)));
      i += run;
      continue;
    }
    // One group of 8 values (zero-padded at the very end), bit-packed LSB first.
    uint64_t acc = 0;
    int bits = 0;
    for (size_t k = 0; k < 8; ++k) {
      uint64_t v = i + k < count ? values[i + k] : 0;
      acc |= v << bits;
      bits += bit_width;
      while (bits >= 8) {
        literal.push_back(static_cast<char>(acc & 0xff));
        acc >>= 8;
        bits -= 8;
      }
    }
    ++literal_groups;
    i += 8;
  }
  flush();
}

}  // namespace lerobot::parquet
