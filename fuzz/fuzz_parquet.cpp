// libFuzzer target: ParquetFile over arbitrary bytes must throw lerobot::Error or succeed, never
// crash, leak or read out of bounds. Any other exception escaping is reported as a crash.
#include <cstddef>
#include <cstdint>

#include "lerobot/common/error.h"
#include "lerobot/io/parquet/column_reader.h"
#include "lerobot/io/parquet/parquet_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool limited = [] {
    lerobot::parquet::set_decode_limits(int64_t(1) << 20, int64_t(64) << 20);
    return true;
  }();
  (void)limited;
  try {
    lerobot::ParquetFile f(data, size, "fuzz-input");
    f.pandas_index_columns();
    f.validate_all();
    for (const std::string& name : f.column_names()) {
      lerobot::ParquetColumnInfo info = f.column_info(name);
      const std::string field = info.fields.empty() ? std::string() : info.fields.back();
      const lerobot::RowRange tail{f.num_rows() / 2, -1};
      using lerobot::parquet::Type;
      switch (info.type) {
        case Type::kBoolean: f.read<bool>(name, tail, field); break;
        case Type::kInt32:
        case Type::kInt64: f.read<int64_t>(name, tail, field); break;
        case Type::kFloat: f.read<float>(name, tail, field); break;
        case Type::kDouble: f.read<double>(name, tail, field); break;
        default: f.read<std::string>(name, tail, field); break;
      }
    }
  } catch (const lerobot::Error&) {
  }
  return 0;
}
