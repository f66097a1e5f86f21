// LeRobot's RunningQuantileStats histogram quantiles, in numpy's float32 arithmetic where it has it.
#include "lerobot/datasets/histogram_quantiles.h"

#include <algorithm>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {

// numpy.linspace(start, stop, num) for float32 ends: y = arange(num) * ((stop - start) / (num - 1)) + start,
// each operation rounded to float32, the last value set to stop (a zero step: arange / div * delta).
std::vector<float> linspace_f32(float start, float stop, int64_t num) {
  std::vector<float> y(static_cast<size_t>(num));
  const float delta = stop - start;
  const float div = static_cast<float>(num - 1);
  const float step = delta / div;
  for (int64_t k = 0; k < num; ++k) {
    float v = static_cast<float>(k);
    if (step == 0.0f) {
      v = v / div;
      v = v * delta;
    } else {
      v = v * step;
    }
    y[static_cast<size_t>(k)] = v + start;
  }
  y.back() = stop;
  return y;
}

}  // namespace

void HistogramQuantiles::update(const torch::Tensor& batch_in) {
  if (batch_in.dim() != 2 || batch_in.size(0) == 0) throw_data("quantile stats need a non-empty (N, D) batch");
  const torch::Tensor batch = batch_in.to(torch::kFloat32).contiguous();
  const int64_t n = batch.size(0), d = batch.size(1);
  const float* x = batch.data_ptr<float>();
  std::vector<float> bmin(static_cast<size_t>(d)), bmax(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) bmin[j] = bmax[j] = x[j];
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      bmin[j] = std::min(bmin[j], x[i * d + j]);
      bmax[j] = std::max(bmax[j], x[i * d + j]);
    }
  if (count_ == 0) {
    min_ = bmin;
    max_ = bmax;
    hist_.assign(static_cast<size_t>(d), std::vector<double>(static_cast<size_t>(bins_), 0.0));
    edges_.clear();
    for (int64_t j = 0; j < d; ++j) edges_.push_back(linspace_f32(min_[j] - 1e-10f, max_[j] + 1e-10f, bins_ + 1));
  } else {
    if (static_cast<int64_t>(min_.size()) != d) throw_data("quantile stats: a batch of another width");
    bool changed = false;
    for (int64_t j = 0; j < d; ++j) {
      changed = changed || bmax[j] > max_[j] || bmin[j] < min_[j];
      max_[j] = std::max(max_[j], bmax[j]);
      min_[j] = std::min(min_[j], bmin[j]);
    }
    if (changed) rebin();
  }
  count_ += n;
  // numpy.histogram with explicit edges: bin i holds e[i] <= v < e[i+1], the last one e[B-1] <= v <= e[B].
  for (int64_t j = 0; j < d; ++j) {
    const std::vector<float>& e = edges_[j];
    std::vector<double>& h = hist_[j];
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i * d + j];
      if (!(v >= e.front() && v <= e.back())) continue;
      int64_t b = static_cast<int64_t>(std::upper_bound(e.begin(), e.end(), v) - e.begin()) - 1;
      h[static_cast<size_t>(std::min(b, bins_ - 1))] += 1.0;
    }
  }
}

void HistogramQuantiles::rebin() {
  for (size_t j = 0; j < hist_.size(); ++j) {
    const std::vector<float> old_edges = edges_[j];
    const float padding = (max_[j] - min_[j]) * 1e-10f;
    std::vector<float> e = linspace_f32(min_[j] - padding, max_[j] + padding, bins_ + 1);
    std::vector<double> h(static_cast<size_t>(bins_), 0.0);
    for (int64_t b = 0; b < bins_; ++b) {
      const double c = hist_[j][static_cast<size_t>(b)];
      if (c <= 0) continue;
      const float centre = (old_edges[b] + old_edges[b + 1]) / 2.0f;
      int64_t k = static_cast<int64_t>(std::lower_bound(e.begin(), e.end(), centre) - e.begin()) - 1;
      h[static_cast<size_t>(std::clamp<int64_t>(k, 0, bins_ - 1))] += c;
    }
    hist_[j] = std::move(h);
    edges_[j] = std::move(e);
  }
}

torch::Tensor HistogramQuantiles::quantile(double q) const {
  if (count_ == 0) throw_data("quantile of no data");
  const double target = q * static_cast<double>(count_);
  std::vector<double> out;
  for (size_t j = 0; j < hist_.size(); ++j) {
    const std::vector<float>& e = edges_[j];
    std::vector<double> cum(hist_[j].size());
    double run = 0;
    for (size_t b = 0; b < cum.size(); ++b) cum[b] = run += hist_[j][b];
    const size_t idx = static_cast<size_t>(std::lower_bound(cum.begin(), cum.end(), target) - cum.begin());
    if (idx == 0) {
      out.push_back(e.front());
    } else if (idx >= cum.size()) {
      out.push_back(e.back());
    } else {
      const double before = cum[idx - 1], in_bin = cum[idx] - before;
      if (in_bin == 0) {
        out.push_back(e[idx]);
      } else {
        const double fraction = (target - before) / in_bin;
        const float width = e[idx + 1] - e[idx];
        out.push_back(static_cast<double>(e[idx]) + fraction * static_cast<double>(width));
      }
    }
  }
  return torch::tensor(out, torch::kFloat64);
}

}  // namespace lerobot
