// FormatError: thrown by the low-level Parquet decoders; ParquetFile rethrows it as a lerobot data
// error that names the file, row group and column.
#pragma once

#include <stdexcept>
#include <string>

namespace lerobot::parquet {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& what) { throw FormatError(what); }

}  // namespace lerobot::parquet
