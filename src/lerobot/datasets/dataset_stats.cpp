// Per-episode statistics and their aggregation (LeRobot compute_stats.py semantics).
#include "lerobot/datasets/dataset_stats.h"

#include <cmath>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {

// Quantile q of each column of (N, D) sorted ascending along dim 0, linear interpolation.
torch::Tensor quantile_sorted(const torch::Tensor& sorted, double q) {
  const int64_t n = sorted.size(0);
  const double pos = q * double(n - 1);
  const int64_t lo = static_cast<int64_t>(std::floor(pos));
  const int64_t hi = std::min(lo + 1, n - 1);
  const double frac = pos - double(lo);
  return sorted[lo] * (1.0 - frac) + sorted[hi] * frac;
}

void add_quantiles(FeatureStats& s, const torch::Tensor& flat) {
  // flat: (N, D) float64
  torch::Tensor sorted = std::get<0>(flat.sort(0));
  const double qs[] = {0.01, 0.10, 0.50, 0.90, 0.99};
  for (int i = 0; i < 5; ++i) s[kQuantileStats[i]] = quantile_sorted(sorted, qs[i]);
}

}  // namespace

FeatureStats compute_array_stats(const torch::Tensor& values, bool with_quantiles) {
  if (values.size(0) == 0) throw_data("cannot compute stats of an empty array");
  torch::Tensor x = values.to(torch::kFloat64);
  if (x.dim() == 1) x = x.unsqueeze(1);
  const int64_t n = x.size(0);
  torch::Tensor flat = x.reshape({n, -1});
  std::vector<int64_t> out_shape(x.sizes().begin() + 1, x.sizes().end());
  FeatureStats s;
  torch::Tensor mean = flat.mean(0);
  torch::Tensor sq = (flat * flat).mean(0);
  s["min"] = std::get<0>(flat.min(0)).reshape(out_shape);
  s["max"] = std::get<0>(flat.max(0)).reshape(out_shape);
  s["mean"] = mean.reshape(out_shape);
  s["std"] = (sq - mean * mean).clamp_min(0).sqrt().reshape(out_shape);
  s["count"] = torch::tensor({n}, torch::kInt64);
  if (with_quantiles) {
    add_quantiles(s, flat);
    for (const char* q : kQuantileStats) s[q] = s[q].reshape(out_shape);
  }
  return s;
}

FeatureStats compute_image_stats(const torch::Tensor& frames_uint8, bool with_quantiles) {
  if (frames_uint8.dim() != 4) throw_data("camera stats need frames shaped (N, C, H, W)");
  torch::Tensor f = frames_uint8;
  const int64_t h = f.size(2), w = f.size(3);
  const int64_t longest = std::max(h, w);
  if (longest >= 300) {
    const int64_t factor = longest / 150;
    f = f.slice(2, 0, h, factor).slice(3, 0, w, factor);
  }
  const int64_t n = f.size(0), c = f.size(1);
  torch::Tensor per_channel = f.permute({0, 2, 3, 1}).reshape({-1, c}).to(torch::kFloat64) / 255.0;
  FeatureStats s = compute_array_stats(per_channel, with_quantiles);
  for (auto& [k, v] : s) {
    if (k == "count") continue;
    v = v.reshape({c, 1, 1});
  }
  s["count"] = torch::tensor({n}, torch::kInt64);
  return s;
}

std::vector<int64_t> sample_frame_indices(int64_t len) {
  if (len <= 0) return {};
  int64_t min_samples = 100;
  if (len < min_samples) min_samples = len;
  const int64_t by_power = static_cast<int64_t>(std::pow(double(len), 0.75));
  const int64_t num = std::max(min_samples, std::min(by_power, int64_t(10000)));
  std::vector<int64_t> out(num);
  for (int64_t i = 0; i < num; ++i) {
    const double v = num == 1 ? 0.0 : double(i) * double(len - 1) / double(num - 1);
    out[i] = static_cast<int64_t>(std::nearbyint(v));  // numpy round: half to even
  }
  return out;
}

FeatureStats aggregate_feature_stats(const std::vector<FeatureStats>& eps) {
  if (eps.empty()) throw_data("no episode stats to aggregate");
  for (const auto& e : eps)
    for (const char* k : {"mean", "std", "min", "max", "count"})
      if (!e.count(k)) throw_data(std::string("episode stats lack '") + k + "'");
  std::vector<torch::Tensor> means, vars, counts, mins, maxs;
  torch::Tensor total = torch::zeros({}, torch::kFloat64);
  for (const auto& e : eps) {
    torch::Tensor n = e.at("count").to(torch::kFloat64).reshape({});
    counts.push_back(n);
    total = total + n;
  }
  FeatureStats out;
  torch::Tensor mean = torch::zeros_like(eps[0].at("mean").to(torch::kFloat64));
  for (size_t i = 0; i < eps.size(); ++i) mean = mean + eps[i].at("mean").to(torch::kFloat64) * counts[i];
  mean = mean / total;
  torch::Tensor var = torch::zeros_like(mean);
  for (size_t i = 0; i < eps.size(); ++i) {
    torch::Tensor m = eps[i].at("mean").to(torch::kFloat64);
    torch::Tensor s = eps[i].at("std").to(torch::kFloat64);
    var = var + (s * s + (m - mean) * (m - mean)) * counts[i];
  }
  var = var / total;
  torch::Tensor mn = eps[0].at("min").to(torch::kFloat64), mx = eps[0].at("max").to(torch::kFloat64);
  for (size_t i = 1; i < eps.size(); ++i) {
    mn = torch::minimum(mn, eps[i].at("min").to(torch::kFloat64));
    mx = torch::maximum(mx, eps[i].at("max").to(torch::kFloat64));
  }
  out["min"] = mn;
  out["max"] = mx;
  out["mean"] = mean;
  out["std"] = var.clamp_min(0).sqrt();
  out["count"] = torch::tensor({static_cast<int64_t>(std::llround(total.item<double>()))}, torch::kInt64);
  bool all_q = true;
  for (const auto& e : eps)
    for (const char* q : kQuantileStats) all_q = all_q && e.count(q);
  if (all_q) {
    for (const char* q : kQuantileStats) {
      const bool low = std::string(q) <= "q50";
      torch::Tensor acc = eps[0].at(q).to(torch::kFloat64);
      for (size_t i = 1; i < eps.size(); ++i) {
        torch::Tensor v = eps[i].at(q).to(torch::kFloat64);
        acc = low ? torch::minimum(acc, v) : torch::maximum(acc, v);
      }
      out[q] = acc;
    }
  }
  return out;
}

DatasetStats aggregate_stats(const std::vector<DatasetStats>& per_episode) {
  std::map<std::string, std::vector<FeatureStats>> by_key;
  for (const auto& ep : per_episode)
    for (const auto& [k, s] : ep) by_key[k].push_back(s);
  DatasetStats out;
  for (const auto& [k, v] : by_key) out[k] = aggregate_feature_stats(v);
  return out;
}

}  // namespace lerobot
