// Normalizer math and state (see normalize.h).
#include "lerobot/policies/normalize.h"

#include "lerobot/common/error.h"
#include "lerobot/policies/padded_inputs.h"

namespace lerobot {

torch::Tensor imagenet_mean() { return torch::tensor({0.485f, 0.456f, 0.406f}).view({3, 1, 1}); }
torch::Tensor imagenet_std() { return torch::tensor({0.229f, 0.224f, 0.225f}).view({3, 1, 1}); }

void apply_imagenet_stats(Stats& stats, const std::vector<std::string>& camera_keys) {
  for (const auto& k : camera_keys) {
    stats[k]["mean"] = imagenet_mean();
    stats[k]["std"] = imagenet_std();
  }
}

Normalizer::Normalizer(std::vector<std::pair<std::string, PolicyFeature>> features,
                       std::map<std::string, std::string> norm_map, const Stats& stats, double eps)
    : features_(std::move(features)), norm_map_(std::move(norm_map)), eps_(eps) {
  for (const auto& kv : norm_map_) {
    const auto& m = kv.second;
    if (m != "MEAN_STD" && m != "MIN_MAX" && m != "QUANTILES" && m != "QUANTILE10" && m != "IDENTITY")
      throw_usage("unknown normalization mode '" + m + "' for " + kv.first, "policy.normalization_mapping",
                  "use MEAN_STD, MIN_MAX, QUANTILES, QUANTILE10 or IDENTITY");
  }
  for (const auto& f : stats)
    for (const auto& s : f.second) stats_[f.first][s.first] = s.second.detach().to(torch::kFloat32).clone();
  reshape_visual_stats();
}

void Normalizer::reshape_visual_stats() {
  for (const auto& f : features_) {
    if (f.second.type != "VISUAL") continue;
    auto it = stats_.find(f.first);
    if (it == stats_.end()) continue;
    for (auto& s : it->second)
      if (s.second.dim() == 1) s.second = s.second.reshape({-1, 1, 1});
  }
}

torch::Tensor Normalizer::apply(const torch::Tensor& x, const std::string& key, const std::string& type,
                                bool inverse) const {
  auto mode_it = norm_map_.find(type);
  const std::string mode = mode_it == norm_map_.end() ? "IDENTITY" : mode_it->second;
  auto st = stats_.find(key);
  if (mode == "IDENTITY" || st == stats_.end()) return x;
  auto get = [&](const char* name) {
    auto it = st->second.find(name);
    if (it == st->second.end())
      throw_data(mode + " normalization of '" + key + "' needs the '" + name + "' stat", key,
                 "recompute the dataset stats or choose another normalization_mapping");
    return it->second.to(x.device(), x.scalar_type());
  };
  if (mode == "MEAN_STD") {
    auto mean = get("mean"), std = get("std");
    return inverse ? x * std + mean : (x - mean) / (std + eps_);
  }
  const char* lo_name = mode == "MIN_MAX" ? "min" : mode == "QUANTILES" ? "q01" : "q10";
  const char* hi_name = mode == "MIN_MAX" ? "max" : mode == "QUANTILES" ? "q99" : "q90";
  auto lo = get(lo_name), hi = get(hi_name);
  auto denom = hi - lo;
  denom = torch::where(denom == 0, torch::full_like(denom, eps_), denom);
  return inverse ? (x + 1) / 2 * denom + lo : 2 * (x - lo) / denom - 1;
}

Batch Normalizer::normalize(const Batch& batch) const {
  Batch out = batch;
  for (const auto& f : features_) {
    auto it = out.find(f.first);
    if (it == out.end()) continue;
    if (f.second.type == "ACTION" && f.first != "action") continue;
    it->second = apply(it->second, f.first, f.second.type, false);
  }
  return out;
}

Batch Normalizer::unnormalize(const Batch& batch) const {
  Batch out = batch;
  for (const auto& f : features_) {
    auto it = out.find(f.first);
    if (it == out.end()) continue;
    if (f.second.type == "ACTION" && f.first != "action") continue;
    it->second = apply(it->second, f.first, f.second.type, true);
  }
  return out;
}

TensorMap Normalizer::state_dict() const {
  TensorMap out;
  for (const auto& f : stats_)
    for (const auto& s : f.second) out[f.first + "." + s.first] = s.second.to(torch::kCPU, torch::kFloat32).contiguous();
  return out;
}

void Normalizer::load_state_dict(const TensorMap& state, const std::string& source) {
  stats_.clear();
  for (const auto& kv : state) {
    const auto dot = kv.first.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == kv.first.size())
      throw_checkpoint("normalizer key '" + kv.first + "' is not '<feature>.<stat>'", source);
    stats_[kv.first.substr(0, dot)][kv.first.substr(dot + 1)] = kv.second.to(torch::kFloat32);
  }
  reshape_visual_stats();
}

void Normalizer::to(const torch::Device& device) {
  for (auto& f : stats_)
    for (auto& s : f.second) s.second = s.second.to(device);
}

namespace {
std::string dims(torch::IntArrayRef s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// `stat` broadcasts to `feature` without growing it (aligned from the right; extra leading 1s).
bool fits(torch::IntArrayRef stat, const std::vector<int64_t>& feature) {
  const int64_t ns = static_cast<int64_t>(stat.size()), nf = static_cast<int64_t>(feature.size());
  for (int64_t i = 1; i <= ns; ++i) {
    const int64_t s = stat[ns - i];
    if (i > nf ? s != 1 : (s != 1 && s != feature[nf - i])) return false;
  }
  return true;
}

// A 1-D state or action stat of another width than its feature, at a width the policy takes
// (padded_inputs.h): narrower where the feature is a checkpoint's zero-padded width (π's and
// SmolVLA's max_state_dim: LeRobot's make_policy keeps a pretrained config's inputs, e.g.
// lerobot/pi05_base's 32-dim state) while the stats are the narrower dataset's, which LeRobot
// normalizes before the policy pads it; any width for π0.5's state, which is only prompt text.
bool other_width_taken(const PolicyConfig& cfg, torch::IntArrayRef stat, const PolicyFeature& feature) {
  return (feature.type == "STATE" || feature.type == "ACTION") && stat.size() == 1 && input_fits(cfg, feature, {stat[0]});
}
}  // namespace

std::vector<std::string> normalizer_stat_problems(const Normalizer& n, const PolicyConfig& cfg) {
  std::vector<std::string> out;
  for (const auto& [key, feature] : n.features()) {
    if (feature.type == "ACTION" && key != "action") continue;  // normalize() leaves those alone
    auto mode_it = n.norm_map().find(feature.type);
    const std::string mode = mode_it == n.norm_map().end() ? "IDENTITY" : mode_it->second;
    if (mode == "IDENTITY") continue;
    auto st = n.stats().find(key);
    const std::vector<const char*> need = mode == "MEAN_STD"   ? std::vector<const char*>{"mean", "std"}
                                          : mode == "MIN_MAX"   ? std::vector<const char*>{"min", "max"}
                                          : mode == "QUANTILES" ? std::vector<const char*>{"q01", "q99"}
                                                                : std::vector<const char*>{"q10", "q90"};
    if (st == n.stats().end()) {
      out.push_back("'" + key + "' has no stats (" + mode + " normalization of " + feature.type + " features needs " +
                    need[0] + " and " + need[1] + ")");
      continue;
    }
    for (const char* name : need) {
      auto it = st->second.find(name);
      if (it == st->second.end())
        out.push_back("'" + key + "' has no '" + name + "' stat (" + mode + " normalization needs it)");
      else if (!fits(it->second.sizes(), feature.shape) && !other_width_taken(cfg, it->second.sizes(), feature))
        out.push_back("'" + key + "/" + name + "' has shape " + dims(it->second.sizes()) + ", which does not fit the "
                      "feature's shape " + dims(feature.shape));
    }
  }
  return out;
}

}  // namespace lerobot
