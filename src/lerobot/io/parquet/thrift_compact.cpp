// Thrift compact protocol reader/writer used for Parquet footers and page headers.
#include "lerobot/io/parquet/thrift_compact.h"

#include "lerobot/io/parquet/format_error.h"

namespace lerobot::parquet {

namespace {
constexpr int kMaxDepth = 32;
}

uint8_t ThriftReader::read_byte() {
  if (pos_ >= size_) fail("thrift: unexpected end of data");
  return data_[pos_++];
}

uint64_t ThriftReader::read_varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    uint8_t b = read_byte();
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("thrift: varint too long");
}

void ThriftReader::begin_struct() {
  if (field_stack_.size() >= kMaxDepth) fail("thrift: nesting too deep");
  field_stack_.push_back(last_field_);
  last_field_ = 0;
}

void ThriftReader::end_struct() {
  if (field_stack_.empty()) fail("thrift: unbalanced struct");
  last_field_ = field_stack_.back();
  field_stack_.pop_back();
}

bool ThriftReader::next_field(int16_t* id, uint8_t* type) {
  uint8_t b = read_byte();
  *type = b & 0x0f;
  if (*type == kTStop) return false;
  uint8_t delta = b >> 4;
  if (delta) {
    *id = static_cast<int16_t>(last_field_ + delta);
  } else {
    uint64_t z = read_varint();
    *id = static_cast<int16_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  last_field_ = *id;
  if (*type == kTBoolTrue || *type == kTBoolFalse) last_bool_ = (*type == kTBoolTrue);
  if (*type > kTStruct) fail("thrift: bad field type " + std::to_string(*type));
  return true;
}

int32_t ThriftReader::read_i32() {
  uint64_t z = read_varint();
  if (z > 0xffffffffull) fail("thrift: i32 out of range");
  uint32_t u = static_cast<uint32_t>(z);
  return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
}

int64_t ThriftReader::read_i64() {
  uint64_t z = read_varint();
  return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
}

std::string ThriftReader::read_string() {
  uint64_t n = read_varint();
  if (n > size_ - pos_) fail("thrift: string length past the end");
  std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return s;
}

uint32_t ThriftReader::read_list_header(uint8_t* elem_type) {
  uint8_t b = read_byte();
  *elem_type = b & 0x0f;
  uint64_t n = b >> 4;
  if (n == 15) n = read_varint();
  // Every element takes at least one byte, except bools packed... which also take one byte.
  if (n > size_ - pos_) fail("thrift: list length past the end");
  return static_cast<uint32_t>(n);
}

void ThriftReader::skip(uint8_t type) { skip_value(type, 0); }

void ThriftReader::skip_value(uint8_t type, int depth) {
  if (depth > kMaxDepth) fail("thrift: nesting too deep");
  switch (type) {
    case kTBoolTrue:
    case kTBoolFalse:
      return;  // value is in the field header
    case kTByte:
      read_byte();
      return;
    case kTI16:
    case kTI32:
    case kTI64:
      read_varint();
      return;
    case kTDouble:
      if (size_ - pos_ < 8) fail("thrift: unexpected end of data");
      pos_ += 8;
      return;
    case kTBinary:
      read_string();
      return;
    case kTList:
    case kTSet: {
      uint8_t et;
      uint32_t n = read_list_header(&et);
      for (uint32_t i = 0; i < n; ++i) {
        if (et == kTBoolTrue || et == kTBoolFalse) read_byte();
        else skip_value(et, depth + 1);
      }
      return;
    }
    case kTMap: {
      uint64_t n = read_varint();
      if (n == 0) return;
      if (n > size_ - pos_) fail("thrift: map length past the end");
      uint8_t kv = read_byte();
      for (uint64_t i = 0; i < n; ++i) {
        skip_value(kv >> 4, depth + 1);
        skip_value(kv & 0x0f, depth + 1);
      }
      return;
    }
    case kTStruct: {
      begin_struct();
      int16_t id;
      uint8_t t;
      while (next_field(&id, &t)) skip_value(t, depth + 1);
      end_struct();
      return;
    }
    default:
      fail("thrift: bad type " + std::to_string(type));
  }
}

// ---- writer ----

void ThriftWriter::write_varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void ThriftWriter::begin_struct() {
  field_stack_.push_back(last_field_);
  last_field_ = 0;
}

void ThriftWriter::end_struct() {
  out_.push_back(0);
  last_field_ = field_stack_.back();
  field_stack_.pop_back();
}

void ThriftWriter::field_header(int16_t id, uint8_t type) {
  int delta = id - last_field_;
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | type));
  } else {
    out_.push_back(static_cast<char>(type));
    write_varint(zigzag32(id));
  }
  last_field_ = id;
}

void ThriftWriter::field_i32(int16_t id, int32_t v) {
  field_header(id, kTI32);
  write_varint(zigzag32(v));
}

void ThriftWriter::field_i64(int16_t id, int64_t v) {
  field_header(id, kTI64);
  write_varint(zigzag64(v));
}

void ThriftWriter::field_bool(int16_t id, bool v) { field_header(id, v ? kTBoolTrue : kTBoolFalse); }

void ThriftWriter::field_string(int16_t id, const std::string& v) {
  field_header(id, kTBinary);
  elem_string(v);
}

void ThriftWriter::elem_string(const std::string& v) {
  write_varint(v.size());
  out_ += v;
}

void ThriftWriter::field_struct_begin(int16_t id) {
  field_header(id, kTStruct);
  begin_struct();
}

void ThriftWriter::field_list_begin(int16_t id, uint8_t elem_type, size_t count) {
  field_header(id, kTList);
  if (count < 15) {
    out_.push_back(static_cast<char>((count << 4) | elem_type));
  } else {
    out_.push_back(static_cast<char>(0xf0 | elem_type));
    write_varint(count);
  }
}

}  // namespace lerobot::parquet
