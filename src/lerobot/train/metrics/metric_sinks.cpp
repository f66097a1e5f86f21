// JSONL metrics file.
#include "lerobot/train/metrics/metric_sinks.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "lerobot/common/error.h"

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

int64_t drop_records_after_step(const fs::path& path, int64_t step) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return 0;
  const std::string text = read_file(path);
  std::string kept;
  int64_t dropped = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    if (end == std::string::npos) {  // torn by a crash mid-write
      ++dropped;
      break;
    }
    const std::string_view line(text.data() + begin, end - begin + 1);
    const Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool later = record.is_object() && record.contains("step") && record["step"].is_number_integer() &&
                       record["step"].get<int64_t>() > step;
    if (later) ++dropped;
    else kept.append(line);
    begin = end + 1;
  }
  if (dropped > 0) write_file_atomic(path, kept);
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
