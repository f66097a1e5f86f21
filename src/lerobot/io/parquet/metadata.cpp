// Thrift compact (de)serialisation of the Parquet footer and page headers.
#include "lerobot/io/parquet/metadata.h"

#include "lerobot/io/parquet/format_error.h"
#include "lerobot/io/parquet/thrift_compact.h"

namespace lerobot::parquet {

const char* type_name(Type t) {
  switch (t) {
    case Type::kBoolean: return "BOOLEAN";
    case Type::kInt32: return "INT32";
    case Type::kInt64: return "INT64";
    case Type::kInt96: return "INT96";
    case Type::kFloat: return "FLOAT";
    case Type::kDouble: return "DOUBLE";
    case Type::kByteArray: return "BYTE_ARRAY";
    case Type::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN";
}

namespace {

void expect(uint8_t got, uint8_t want, const char* field) {
  if (got != want) fail(std::string("thrift: field ") + field + " has the wrong type");
}

// Calls fn(id, type) for each field of a struct; fn must consume or skip the value.
template <class Fn>
void read_struct(ThriftReader& r, Fn fn) {
  r.begin_struct();
  int16_t id;
  uint8_t t;
  while (r.next_field(&id, &t)) fn(id, t);
  r.end_struct();
}

int32_t i32(ThriftReader& r, uint8_t t, const char* f) {
  expect(t, kTI32, f);
  return r.read_i32();
}
int64_t i64(ThriftReader& r, uint8_t t, const char* f) {
  if (t == kTI32) return r.read_i32();
  expect(t, kTI64, f);
  return r.read_i64();
}

template <class Fn>
void read_list(ThriftReader& r, uint8_t t, uint8_t elem, const char* f, Fn fn) {
  expect(t, kTList, f);
  uint8_t et;
  uint32_t n = r.read_list_header(&et);
  if (n > 0 && et != elem) fail(std::string("thrift: list ") + f + " has the wrong element type");
  for (uint32_t i = 0; i < n; ++i) fn();
}

SchemaElement read_schema_element(ThriftReader& r) {
  SchemaElement e;
  bool has_name = false;
  read_struct(r, [&](int16_t id, uint8_t t) {
    switch (id) {
      case 1: {
        int32_t v = i32(r, t, "type");
        if (v < 0 || v > 7) fail("schema: bad physical type " + std::to_string(v));
        e.type = static_cast<Type>(v);
        e.has_type = true;
        break;
      }
      case 2: e.type_length = i32(r, t, "type_length"); break;
      case 3: {
        int32_t v = i32(r, t, "repetition_type");
        if (v < 0 || v > 2) fail("schema: bad repetition " + std::to_string(v));
        e.repetition = static_cast<Repetition>(v);
        e.has_repetition = true;
        break;
      }
      case 4: expect(t, kTBinary, "name"); e.name = r.read_string(); has_name = true; break;
      case 5: e.num_children = i32(r, t, "num_children"); break;
      case 6: e.converted_type = i32(r, t, "converted_type"); break;
      case 10:
        expect(t, kTStruct, "logicalType");
        read_struct(r, [&](int16_t lid, uint8_t lt) {
          e.logical_type = lid;
          r.skip(lt);
        });
        break;
      default: r.skip(t);
    }
  });
  if (!has_name) fail("schema: element without a name");
  if (e.num_children < 0) fail("schema: negative num_children");
  return e;
}

ColumnMetaData read_column_meta(ThriftReader& r) {
  ColumnMetaData m;
  read_struct(r, [&](int16_t id, uint8_t t) {
    switch (id) {
      case 1: {
        int32_t v = i32(r, t, "type");
        if (v < 0 || v > 7) fail("column: bad physical type " + std::to_string(v));
        m.type = static_cast<Type>(v);
        break;
      }
      case 2: read_list(r, t, kTI32, "encodings", [&] { m.encodings.push_back(r.read_i32()); }); break;
      case 3:
        read_list(r, t, kTBinary, "path_in_schema",
                  [&] { m.path_in_schema.push_back(r.read_string()); });
        break;
      case 4: m.codec = static_cast<Codec>(i32(r, t, "codec")); break;
      case 5: m.num_values = i64(r, t, "num_values"); break;
      case 6: m.total_uncompressed_size = i64(r, t, "total_uncompressed_size"); break;
      case 7: m.total_compressed_size = i64(r, t, "total_compressed_size"); break;
      case 9: m.data_page_offset = i64(r, t, "data_page_offset"); break;
      case 11: m.dictionary_page_offset = i64(r, t, "dictionary_page_offset"); break;
      default: r.skip(t);
    }
  });
  return m;
}

RowGroup read_row_group(ThriftReader& r) {
  RowGroup g;
  read_struct(r, [&](int16_t id, uint8_t t) {
    switch (id) {
      case 1:
        read_list(r, t, kTStruct, "columns", [&] {
          ColumnChunk c;
          read_struct(r, [&](int16_t cid, uint8_t ct) {
            switch (cid) {
              case 1: expect(ct, kTBinary, "file_path"); r.read_string(); c.external = true; break;
              case 2: c.file_offset = i64(r, ct, "file_offset"); break;
              case 3:
                expect(ct, kTStruct, "meta_data");
                c.meta_data = read_column_meta(r);
                c.has_meta_data = true;
                break;
              default: r.skip(ct);
            }
          });
          g.columns.push_back(std::move(c));
        });
        break;
      case 2: g.total_byte_size = i64(r, t, "total_byte_size"); break;
      case 3: g.num_rows = i64(r, t, "num_rows"); break;
      default: r.skip(t);
    }
  });
  if (g.num_rows < 0) fail("row group: negative num_rows");
  return g;
}

}  // namespace

FileMetaData parse_file_metadata(const uint8_t* data, size_t size) {
  ThriftReader r(data, size);
  FileMetaData md;
  read_struct(r, [&](int16_t id, uint8_t t) {
    switch (id) {
      case 1: md.version = i32(r, t, "version"); break;
      case 2:
        read_list(r, t, kTStruct, "schema", [&] { md.schema.push_back(read_schema_element(r)); });
        break;
      case 3: md.num_rows = i64(r, t, "num_rows"); break;
      case 4:
        read_list(r, t, kTStruct, "row_groups", [&] { md.row_groups.push_back(read_row_group(r)); });
        break;
      case 5:
        read_list(r, t, kTStruct, "key_value_metadata", [&] {
          std::pair<std::string, std::string> kv;
          read_struct(r, [&](int16_t kid, uint8_t kt) {
            if (kid == 1 && kt == kTBinary) kv.first = r.read_string();
            else if (kid == 2 && kt == kTBinary) kv.second = r.read_string();
            else r.skip(kt);
          });
          md.key_value_metadata.push_back(std::move(kv));
        });
        break;
      case 6: expect(t, kTBinary, "created_by"); md.created_by = r.read_string(); break;
      default: r.skip(t);
    }
  });
  if (md.num_rows < 0) fail("footer: negative num_rows");
  return md;
}

PageHeader parse_page_header(const uint8_t* data, size_t size, size_t* consumed) {
  ThriftReader r(data, size);
  PageHeader h;
  bool has_type = false;
  read_struct(r, [&](int16_t id, uint8_t t) {
    switch (id) {
      case 1: h.type = static_cast<PageType>(i32(r, t, "page type")); has_type = true; break;
      case 2: h.uncompressed_page_size = i32(r, t, "uncompressed_page_size"); break;
      case 3: h.compressed_page_size = i32(r, t, "compressed_page_size"); break;
      case 4: h.crc = static_cast<uint32_t>(i32(r, t, "crc")); h.has_crc = true; break;
      case 5:
        expect(t, kTStruct, "data_page_header");
        h.has_data = true;
        read_struct(r, [&](int16_t d, uint8_t dt) {
          if (d == 1) h.data.num_values = i32(r, dt, "num_values");
          else if (d == 2) h.data.encoding = i32(r, dt, "encoding");
          else if (d == 3) h.data.definition_level_encoding = i32(r, dt, "def encoding");
          else if (d == 4) h.data.repetition_level_encoding = i32(r, dt, "rep encoding");
          else r.skip(dt);
        });
        break;
      case 7:
        expect(t, kTStruct, "dictionary_page_header");
        h.has_dict = true;
        read_struct(r, [&](int16_t d, uint8_t dt) {
          if (d == 1) h.dict.num_values = i32(r, dt, "num_values");
          else if (d == 2) h.dict.encoding = i32(r, dt, "encoding");
          else r.skip(dt);
        });
        break;
      case 8:
        expect(t, kTStruct, "data_page_header_v2");
        h.has_data_v2 = true;
        read_struct(r, [&](int16_t d, uint8_t dt) {
          auto& v = h.data_v2;
          switch (d) {
            case 1: v.num_values = i32(r, dt, "num_values"); break;
            case 2: v.num_nulls = i32(r, dt, "num_nulls"); break;
            case 3: v.num_rows = i32(r, dt, "num_rows"); break;
            case 4: v.encoding = i32(r, dt, "encoding"); break;
            case 5: v.definition_levels_byte_length = i32(r, dt, "def length"); break;
            case 6: v.repetition_levels_byte_length = i32(r, dt, "rep length"); break;
            case 7:
              if (dt != kTBoolTrue && dt != kTBoolFalse) fail("thrift: is_compressed not a bool");
              v.is_compressed = r.bool_value();
              break;
            default: r.skip(dt);
          }
        });
        break;
      default: r.skip(t);
    }
  });
  if (!has_type) fail("page header without a type");
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) fail("negative page size");
  *consumed = r.position();
  return h;
}

// ---- serialisation ----

std::string serialize_file_metadata(const FileMetaData& md) {
  ThriftWriter w;
  w.begin_struct();
  w.field_i32(1, md.version);
  w.field_list_begin(2, kTStruct, md.schema.size());
  for (const auto& e : md.schema) {
    w.begin_struct();
    if (e.has_type) w.field_i32(1, static_cast<int32_t>(e.type));
    if (e.has_type && e.type == Type::kFixedLenByteArray) w.field_i32(2, e.type_length);
    if (e.has_repetition) w.field_i32(3, static_cast<int32_t>(e.repetition));
    w.field_string(4, e.name);
    if (!e.has_type) w.field_i32(5, e.num_children);
    if (e.converted_type >= 0) w.field_i32(6, e.converted_type);
    if (e.logical_type >= 0) {
      w.field_struct_begin(10);
      w.field_struct_begin(static_cast<int16_t>(e.logical_type));  // empty member struct
      w.end_struct();
      w.end_struct();
    }
    w.end_struct();
  }
  w.field_i64(3, md.num_rows);
  w.field_list_begin(4, kTStruct, md.row_groups.size());
  for (const auto& g : md.row_groups) {
    w.begin_struct();
    w.field_list_begin(1, kTStruct, g.columns.size());
    for (const auto& c : g.columns) {
      const auto& m = c.meta_data;
      w.begin_struct();
      w.field_i64(2, c.file_offset);
      w.field_struct_begin(3);
      w.field_i32(1, static_cast<int32_t>(m.type));
      w.field_list_begin(2, kTI32, m.encodings.size());
      for (int32_t e : m.encodings) w.elem_i32(e);
      w.field_list_begin(3, kTBinary, m.path_in_schema.size());
      for (const auto& p : m.path_in_schema) w.elem_string(p);
      w.field_i32(4, static_cast<int32_t>(m.codec));
      w.field_i64(5, m.num_values);
      w.field_i64(6, m.total_uncompressed_size);
      w.field_i64(7, m.total_compressed_size);
      w.field_i64(9, m.data_page_offset);
      if (m.dictionary_page_offset >= 0) w.field_i64(11, m.dictionary_page_offset);
      w.end_struct();
      w.end_struct();
    }
    w.field_i64(2, g.total_byte_size);
    w.field_i64(3, g.num_rows);
    w.end_struct();
  }
  if (!md.key_value_metadata.empty()) {
    w.field_list_begin(5, kTStruct, md.key_value_metadata.size());
    for (const auto& kv : md.key_value_metadata) {
      w.begin_struct();
      w.field_string(1, kv.first);
      w.field_string(2, kv.second);
      w.end_struct();
    }
  }
  w.field_string(6, md.created_by);
  w.end_struct();
  return w.bytes();
}

std::string serialize_page_header(const PageHeader& h) {
  ThriftWriter w;
  w.begin_struct();
  w.field_i32(1, static_cast<int32_t>(h.type));
  w.field_i32(2, h.uncompressed_page_size);
  w.field_i32(3, h.compressed_page_size);
  if (h.has_crc) w.field_i32(4, static_cast<int32_t>(h.crc));
  if (h.has_data) {
    w.field_struct_begin(5);
    w.field_i32(1, h.data.num_values);
    w.field_i32(2, h.data.encoding);
    w.field_i32(3, h.data.definition_level_encoding);
    w.field_i32(4, h.data.repetition_level_encoding);
    w.end_struct();
  }
  if (h.has_dict) {
    w.field_struct_begin(7);
    w.field_i32(1, h.dict.num_values);
    w.field_i32(2, h.dict.encoding);
    w.end_struct();
  }
  if (h.has_data_v2) {
    const auto& v = h.data_v2;
    w.field_struct_begin(8);
    w.field_i32(1, v.num_values);
    w.field_i32(2, v.num_nulls);
    w.field_i32(3, v.num_rows);
    w.field_i32(4, v.encoding);
    w.field_i32(5, v.definition_levels_byte_length);
    w.field_i32(6, v.repetition_levels_byte_length);
    w.field_bool(7, v.is_compressed);
    w.end_struct();
  }
  w.end_struct();
  return w.bytes();
}

}  // namespace lerobot::parquet
