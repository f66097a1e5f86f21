// Parquet footer and page-header structures (the subset of parquet.thrift that we use), with
// Thrift compact parsing and serialisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lerobot::parquet {

enum class Type : int32_t {
  kBoolean = 0, kInt32 = 1, kInt64 = 2, kInt96 = 3, kFloat = 4, kDouble = 5, kByteArray = 6,
  kFixedLenByteArray = 7,
};
enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };
enum class Codec : int32_t { kUncompressed = 0, kSnappy = 1, kGzip = 2, kZstd = 6 };
enum class Encoding : int32_t {
  kPlain = 0, kPlainDictionary = 2, kRle = 3, kBitPacked = 4, kRleDictionary = 8,
};
enum class PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };
// ConvertedType values we emit or look at.
constexpr int32_t kConvertedUtf8 = 0;
constexpr int32_t kConvertedList = 3;
// LogicalType union member ids we emit or look at.
constexpr int32_t kLogicalString = 1;
constexpr int32_t kLogicalList = 3;

const char* type_name(Type t);

struct SchemaElement {
  std::string name;
  bool has_type = false;  // leaves have a physical type, groups do not
  Type type = Type::kInt32;
  int32_t type_length = 0;
  Repetition repetition = Repetition::kRequired;
  bool has_repetition = false;
  int32_t num_children = 0;
  int32_t converted_type = -1;  // -1: absent
  int32_t logical_type = -1;    // id of the LogicalType union member, -1: absent
};

struct ColumnMetaData {
  Type type = Type::kInt32;
  std::vector<int32_t> encodings;
  std::vector<std::string> path_in_schema;
  Codec codec = Codec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = 0;
  int64_t dictionary_page_offset = -1;  // -1: absent
};

struct ColumnChunk {
  int64_t file_offset = 0;
  bool has_meta_data = false;
  bool external = false;  // file_path set: data lives in another file (unsupported)
  ColumnMetaData meta_data;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<std::pair<std::string, std::string>> key_value_metadata;
  std::string created_by;
};

struct DataPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
  int32_t definition_level_encoding = 0;
  int32_t repetition_level_encoding = 0;
};
struct DictionaryPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
};
struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t encoding = 0;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  bool has_crc = false;
  uint32_t crc = 0;
  bool has_data = false, has_dict = false, has_data_v2 = false;
  DataPageHeader data;
  DictionaryPageHeader dict;
  DataPageHeaderV2 data_v2;
};

// Parse; throw FormatError on malformed input. parse_page_header sets *consumed to its size.
FileMetaData parse_file_metadata(const uint8_t* data, size_t size);
PageHeader parse_page_header(const uint8_t* data, size_t size, size_t* consumed);

std::string serialize_file_metadata(const FileMetaData& md);
std::string serialize_page_header(const PageHeader& h);

}  // namespace lerobot::parquet
