// Filesystem helpers: whole-file reads, atomic writes (temp file + fsync + rename), and
// read-only memory maps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lerobot {

namespace fs = std::filesystem;

// The largest JSON/JSONL/YAML file read whole (metadata, configs, processor files): 256 MiB, far
// above any real one (a 10k-episode episodes_stats.jsonl is ~50 MB).
inline constexpr std::uintmax_t kMaxTextFileBytes = 256ull << 20;

// Reads a whole regular file. Throws a data error naming the file when it cannot be opened, is
// not a regular file (a FIFO or a link to /dev/zero would never end), or exceeds max_bytes.
std::string read_file(const fs::path& path, std::uintmax_t max_bytes = kMaxTextFileBytes);

// Writes to "<path>.tmp-<pid>", fsyncs it, renames over `path` and fsyncs the directory, so a
// reader sees either the old or the new file, never a half-written one.
void write_file_atomic(const fs::path& path, std::string_view bytes);

// fsync a directory so a rename inside it is durable.
void fsync_dir(const fs::path& dir);

// A read-only memory map of a whole file; movable, not copyable.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const fs::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const fs::path& path() const { return path_; }

 private:
  void release();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  fs::path path_;
};

}  // namespace lerobot
