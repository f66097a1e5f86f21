// JSONL metrics file.
#include "lerobot/train/metrics/metric_sinks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"

namespace lerobot {

JsonlSink::JsonlSink(const fs::path& path, bool append) : path_(path) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!file_)
    throw_runtime("cannot open the metrics file: " + std::string(std::strerror(errno)), path.string(),
                  "check that the output directory is writable");
}

JsonlSink::~JsonlSink() {
  if (file_) std::fclose(file_);
}

void JsonlSink::write(const Json& record) {
  const std::string line = record.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw_runtime("write failed", path_.string(), "check free disk space");
}

namespace {

// Cuts `path` to its first `bytes` bytes and makes that durable.
void truncate_durably(const fs::path& path, size_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0 || ::fsync(fd) != 0) {
    const std::string err = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw_runtime("cannot cut the records after the checkpoint: " + err, path.string(),
                  "check that the output directory is writable");
  }
  ::close(fd);
}

}  // namespace

int64_t drop_records_after_step(const fs::path& path, int64_t step) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) == 0) return 0;
  // Mapped, not read whole: a long run logging every step may pass read_file's cap.
  const MappedFile map(path);
  const std::string_view text(reinterpret_cast<const char*>(map.data()), map.size());
  size_t cut = std::string_view::npos;  // where the first dropped line starts
  bool rewrite = false;                 // a kept line follows a dropped one
  std::string kept;                     // then: every kept line
  int64_t dropped = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    const bool torn = end == std::string_view::npos;  // the crash came mid-write
    const std::string_view line = text.substr(begin, torn ? std::string_view::npos : end - begin + 1);
    bool drop = torn;
    if (!torn) {
      const Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      drop = record.is_object() && record.contains("step") && record["step"].is_number_integer() &&
             record["step"].get<int64_t>() > step;
    }
    if (drop) {
      ++dropped;
      if (cut == std::string_view::npos) cut = begin;
    } else if (cut != std::string_view::npos) {
      if (!rewrite) kept.assign(text.substr(0, cut));
      rewrite = true;
      kept.append(line);
    }
    if (torn) break;
    begin = end + 1;
  }
  if (dropped == 0) return 0;
  if (rewrite) write_file_atomic(path, kept);  // an older line after a later one
  else truncate_durably(path, cut);           // the usual case: the tail goes
  return dropped;
}

Json metrics_record(const MetricsTracker& tracker, const std::string& split) {
  const Json d = tracker.to_dict();
  Json r = Json::object();
  r["split"] = split;
  r["step"] = d.at("steps");
  for (auto it = d.begin(); it != d.end(); ++it) {
    if (it.key() == "steps") continue;
    const Json& v = it.value();
    if (v.is_number_float() && !std::isfinite(v.get<double>())) r[it.key()] = nullptr;
    else r[it.key()] = v;
  }
  using namespace std::chrono;
  r["wall_time"] = duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
  return r;
}

}  // namespace lerobot
