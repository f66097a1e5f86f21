// Thrift compact protocol: a bounds-checked reader and a small writer, enough for Parquet metadata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lerobot::parquet {

// Compact-protocol type ids.
enum ThriftType : uint8_t {
  kTStop = 0, kTBoolTrue = 1, kTBoolFalse = 2, kTByte = 3, kTI16 = 4, kTI32 = 5, kTI64 = 6,
  kTDouble = 7, kTBinary = 8, kTList = 9, kTSet = 10, kTMap = 11, kTStruct = 12,
};

// Reads from [data, data + size). Every read checks bounds; malformed input throws
// FormatError which callers turn into a lerobot data error.
class ThriftReader {
 public:
  ThriftReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Struct framing: begin_struct() before the first field, end_struct() after kTStop.
  void begin_struct();
  void end_struct();
  // Next field header; returns false at kTStop. `type` is the compact type id.
  bool next_field(int16_t* id, uint8_t* type);
  bool bool_value() const { return last_bool_; }  // for a kTBoolTrue/kTBoolFalse field

  int32_t read_i32();
  int64_t read_i64();
  std::string read_string();
  // List header: element type and count (count bounded by the remaining bytes).
  uint32_t read_list_header(uint8_t* elem_type);
  void skip(uint8_t type);  // skips a value of this type (nested, depth-limited)

  size_t position() const { return pos_; }

 private:
  uint8_t read_byte();
  uint64_t read_varint();
  void skip_value(uint8_t type, int depth);

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool last_bool_ = false;
  std::vector<int16_t> field_stack_;
  int16_t last_field_ = 0;
};

class ThriftWriter {
 public:
  void begin_struct();
  void end_struct();  // writes kTStop
  void field_i32(int16_t id, int32_t v);
  void field_i64(int16_t id, int64_t v);
  void field_bool(int16_t id, bool v);
  void field_string(int16_t id, const std::string& v);
  void field_struct_begin(int16_t id);  // then fields, then end_struct()
  void field_list_begin(int16_t id, uint8_t elem_type, size_t count);
  // List elements.
  void elem_i32(int32_t v) { write_varint(zigzag32(v)); }
  void elem_string(const std::string& v);
  // Elements of type kTStruct: begin_struct() ... end_struct().

  const std::string& bytes() const { return out_; }

 private:
  // Shifted as unsigned: a negative value shifted left is undefined behaviour before C++20 (UBSan
  // caught it on a page CRC); the arithmetic right shift gives the sign mask.
  static uint64_t zigzag32(int32_t v) {
    return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  }
  static uint64_t zigzag64(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  void field_header(int16_t id, uint8_t type);
  void write_varint(uint64_t v);

  std::string out_;
  std::vector<int16_t> field_stack_;
  int16_t last_field_ = 0;
};

}  // namespace lerobot::parquet
