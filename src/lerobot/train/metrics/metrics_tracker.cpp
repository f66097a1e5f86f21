// AverageMeter / MetricsTracker and Python-compatible number formatting.
#include "lerobot/train/metrics/metrics_tracker.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "lerobot/common/error.h"

namespace lerobot {

const char* reduce_kind_name(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kNone: return "none";
    case ReduceKind::kMean: return "mean";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kSum: return "sum";
  }
  return "?";
}

std::string format_python(double value, const std::string& spec) {
  // spec: ":" [width] ["." precision] type
  size_t i = (!spec.empty() && spec[0] == ':') ? 1 : 0;
  int width = 0, precision = 6;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) width = width * 10 + (spec[i++] - '0');
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) precision = precision * 10 + (spec[i++] - '0');
  }
  const char type = i < spec.size() ? spec[i] : 'f';
  LEROBOT_CHECK(type == 'f' || type == 'e' || type == 'g', "unsupported format spec " + spec);
  std::string body;
  if (std::isnan(value)) {
    body = "nan";
  } else if (std::isinf(value)) {
    body = value > 0 ? "inf" : "-inf";
  } else {
    char fmt[16];
    std::snprintf(fmt, sizeof(fmt), "%%.%d%c", precision, type);
    char buf[512];
    std::snprintf(buf, sizeof(buf), fmt, value);
    body = buf;
  }
  if (static_cast<int>(body.size()) < width) body.insert(0, width - body.size(), ' ');
  return body;
}

AverageMeter::AverageMeter(std::string name, std::string fmt, ReduceKind reduction)
    : name_(std::move(name)), fmt_(std::move(fmt)), reduction_(reduction) {}

void AverageMeter::reset() { val = avg = sum = count = 0.0; }

void AverageMeter::update(double value, double n) {
  val = value;
  sum += value * n;
  count += n;
  avg = sum / count;
}

void AverageMeter::spread(double total) {
  sum += total;
  if (count > 0) avg = sum / count;
}

std::string AverageMeter::to_string() const { return name_ + ":" + format_python(avg, fmt_); }

MetricsTracker::MetricsTracker(int64_t batch_size, int64_t num_frames, int64_t num_episodes,
                               int64_t initial_step, int64_t world_size)
    : samples_per_step_(batch_size * world_size),
      num_frames_(static_cast<double>(num_frames)),
      avg_samples_per_ep_(static_cast<double>(num_frames) / static_cast<double>(num_episodes)),
      steps_(initial_step) {
  LEROBOT_CHECK(num_frames > 0 && num_episodes > 0, "MetricsTracker needs a non-empty dataset");
  samples_ = steps_ * samples_per_step_;
  refresh();
}

void MetricsTracker::refresh() {
  episodes_ = static_cast<double>(samples_) / avg_samples_per_ep_;
  epochs_ = static_cast<double>(samples_) / num_frames_;
}

AverageMeter& MetricsTracker::add_meter(const std::string& key, AverageMeter meter) {
  LEROBOT_CHECK(!has(key), "meter '" + key + "' registered twice");
  keys_.push_back(key);
  meters_.push_back(std::move(meter));
  return meters_.back();
}

bool MetricsTracker::has(const std::string& key) const {
  for (const auto& k : keys_)
    if (k == key) return true;
  return false;
}

AverageMeter& MetricsTracker::meter(const std::string& key) {
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key) return meters_[i];
  LEROBOT_CHECK(false, "no meter named '" + key + "'");
}

void MetricsTracker::update(const std::string& key, double value, double n) { meter(key).update(value, n); }

void MetricsTracker::update_output(const std::string& key, double value, double n) {
  if (!has(key)) {
    add_meter(key, AverageMeter(key, ":.3f", ReduceKind::kMean));
    output_keys_.insert(key);
  }
  meter(key).update(value, n);
}

void MetricsTracker::step() {
  ++steps_;
  samples_ += samples_per_step_;
  refresh();
}

void MetricsTracker::reduce_across_ranks(const ReduceFn& reduce) {
  if (!reduce) return;
  for (ReduceKind kind : {ReduceKind::kMean, ReduceKind::kMax, ReduceKind::kSum}) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < meters_.size(); ++i)
      if (meters_[i].reduction() == kind) idx.push_back(i);
    if (idx.empty()) continue;
    std::vector<float> values;
    for (size_t i : idx) values.push_back(static_cast<float>(meters_[i].avg));
    reduce(values, kind);
    LEROBOT_CHECK(values.size() == idx.size(), "reduce callback changed the number of values");
    for (size_t k = 0; k < idx.size(); ++k) {
      auto& m = meters_[idx[k]];
      m.avg = values[k];
      m.sum = m.avg * m.count;  // keep avg == sum / count, as LeRobot does
    }
  }
}

void MetricsTracker::reset_averages() {
  for (auto& m : meters_) m.reset();
}

bool MetricsTracker::absent_output(size_t i) const {
  // A policy output missing from every step of the window (VQ-BeT logs other values in each phase).
  return meters_[i].count == 0 && output_keys_.count(keys_[i]) > 0;
}

std::string MetricsTracker::to_string() const {
  std::string s = "step:" + format_big_number(static_cast<double>(steps_)) +
                  " smpl:" + format_big_number(static_cast<double>(samples_)) +
                  " ep:" + format_big_number(episodes_) + " epch:" + format_python(epochs_, ":.2f");
  for (size_t i = 0; i < meters_.size(); ++i)
    if (!absent_output(i)) s += " " + meters_[i].to_string();
  return s;
}

Json MetricsTracker::to_dict() const {
  Json j = Json::object();
  j["steps"] = steps_;
  j["samples"] = samples_;
  j["episodes"] = episodes_;
  j["epochs"] = epochs_;
  for (size_t i = 0; i < keys_.size(); ++i)
    if (!absent_output(i)) j[keys_[i]] = meters_[i].avg;
  return j;
}

void add_default_train_meters(MetricsTracker& t, bool cuda) {
  t.add_meter("loss", AverageMeter("loss", ":.3f", ReduceKind::kMean));
  t.add_meter("grad_norm", AverageMeter("grdn", ":.3f"));
  t.add_meter("lr", AverageMeter("lr", ":0.1e"));
  // LeRobot 0.6.2's order (0.6.1 had updt_s first): the console line and the records follow it.
  t.add_meter("dataloading_s", AverageMeter("data_s", ":.3f", ReduceKind::kMax));
  t.add_meter("preprocessing_s", AverageMeter("prep_s", ":.3f", ReduceKind::kMax));
  t.add_meter("update_s", AverageMeter("updt_s", ":.3f", ReduceKind::kMax));
  t.add_meter("step_s", AverageMeter("step_s", ":.3f", ReduceKind::kMax));
  t.add_meter("samples_per_s", AverageMeter("smp/s", ":.0f"));
  if (cuda) t.add_meter("gpu_mem_gb", AverageMeter("mem_gb", ":.2f", ReduceKind::kMax));
}

}  // namespace lerobot
