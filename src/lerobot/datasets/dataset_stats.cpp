// Per-episode statistics and their aggregation (LeRobot compute_stats.py semantics), and stats.json
// <-> tensors.
#include "lerobot/datasets/dataset_stats.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot {

torch::Tensor read_episode_column(const fs::path& root, const FeatureSpec& f, const EpisodeInfo& e) {
  ParquetFile pf(root / e.data_file);
  const RowRange rr{e.data_row_begin, e.data_row_begin + e.length};
  if (f.shape.size() == 1 && f.shape[0] > 1)
    return torch::tensor(pf.read_float_list(f.key, rr).values, torch::kFloat32).reshape({e.length, f.shape[0]});
  if (f.dtype == "float32" || f.dtype == "float64") return torch::tensor(pf.read_float(f.key, rr), torch::kFloat32);
  return torch::tensor(pf.read_int64(f.key, rr), torch::kInt64);
}

namespace {

std::string shape_text(torch::IntArrayRef s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

void shape_of(const Json& j, std::vector<int64_t>& shape, size_t depth) {
  if (!j.is_array()) return;
  if (shape.size() <= depth) shape.push_back(static_cast<int64_t>(j.size()));
  if (!j.empty()) shape_of(j[0], shape, depth + 1);
}

// The numbers of a nested list, in order; `id` ('key/stat') and `label` (the file) name a non-number.
void flatten(const Json& j, std::vector<double>& out, const std::string& id, const std::string& label) {
  if (j.is_array()) {
    for (const auto& x : j) flatten(x, out, id, label);
  } else if (j.is_number()) {
    out.push_back(j.get<double>());
  } else {
    throw_data(id + " holds " + j.dump().substr(0, 40) + ", not a number", label);
  }
}


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
  // Callers check each episode's stats against info.json (metadata_checks.h); this keeps LibTorch's
  // broadcasting error from being what a caller that did not sees.
  for (const auto& e : eps)
    for (const auto& [k, v] : eps[0])
      if (e.count(k) && e.at(k).sizes() != v.sizes())
        throw_data("episode stats '" + k + "' differ in shape between episodes (" + shape_text(v.sizes()) + " and " +
                   shape_text(e.at(k).sizes()) + ")");
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

DatasetStats stats_from_json(const Json& j, const std::string& label) {
  DatasetStats out;
  if (!j.is_object()) throw_data("stats must be a JSON object", label);
  for (const auto& [key, feat] : j.items()) {
    if (!feat.is_object()) throw_data("'" + key + "' is " + feat.dump().substr(0, 40) + ", not an object of stats", label);
    for (const auto& [stat, val] : feat.items()) {
      std::vector<int64_t> shape;
      shape_of(val, shape, 0);
      std::vector<double> flat;
      flatten(val, flat, "'" + key + "/" + stat + "'", label);
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      if (numel != static_cast<int64_t>(flat.size()))  // [[1, 2], [3]]: not an array of one shape
        throw_data("'" + key + "/" + stat + "' is a ragged nested list (its rows differ in length)", label);
      torch::Tensor t = torch::tensor(flat, torch::kFloat64);
      t = shape.empty() ? t.reshape({}) : t.reshape(shape);
      if (stat == "count") t = t.round().to(torch::kInt64);
      out[key][stat] = t;
    }
  }
  return out;
}

Json tensor_to_json(const torch::Tensor& t) {
  if (t.dim() == 0) {
    if (t.scalar_type() == torch::kInt64) return t.item<int64_t>();
    return t.item<double>();
  }
  Json arr = Json::array();
  for (int64_t i = 0; i < t.size(0); ++i) arr.push_back(tensor_to_json(t[i]));
  return arr;
}

Json stats_to_json(const DatasetStats& stats) {
  Json j = Json::object();
  const char* order[] = {"min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"};
  for (const auto& [key, fs_] : stats) {
    Json f = Json::object();
    for (const char* s : order)
      if (auto it = fs_.find(s); it != fs_.end()) f[s] = tensor_to_json(it->second.cpu());
    for (const auto& [s, v] : fs_)
      if (!f.contains(s)) f[s] = tensor_to_json(v.cpu());
    j[key] = f;
  }
  return j;
}

DatasetStats aggregate_stats(const std::vector<DatasetStats>& per_episode) {
  std::map<std::string, std::vector<FeatureStats>> by_key;
  for (const auto& ep : per_episode)
    for (const auto& [k, s] : ep) by_key[k].push_back(s);
  DatasetStats out;
  for (const auto& [k, v] : by_key) {
    try {
      out[k] = aggregate_feature_stats(v);
    } catch (const Error& e) {
      throw_data(e.problem(), "'" + k + "'", e.fix());
    }
  }
  return out;
}

}  // namespace lerobot
