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
