// Real-time chunking: see rtc.h.
#include "lerobot/policies/rtc.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

const char* schedule_name(RtcSchedule s) {
  switch (s) {
    case RtcSchedule::kZeros: return "ZEROS";
    case RtcSchedule::kOnes: return "ONES";
    case RtcSchedule::kLinear: return "LINEAR";
    case RtcSchedule::kExp: return "EXP";
  }
  return "LINEAR";
}

// LeRobot's _linweights: the linear ramp strictly between 1 and 0 over the steps in [start, end).
torch::Tensor linear_weights(int64_t start, int64_t end, int64_t total) {
  const int64_t skip_at_end = std::max<int64_t>(total - end, 0);
  const int64_t steps = total - skip_at_end - start;
  if (end <= start || steps <= 0) return torch::empty({0}, torch::kFloat);
  return torch::linspace(1, 0, steps + 2, torch::kFloat).slice(0, 1, steps + 1);
}

}  // namespace

void check_rtc_mode(const RtcSettings& settings, bool trained_supported, const std::string& flag) {
  if (settings.trained && !trained_supported)  // LeRobot's RTCProcessor refuses it (a pi05 training option)
    throw_usage("rtc_config.mode 'trained' needs a policy trained for it (LeRobot: pi05 with rtc_training_max_delay)",
                flag + ".mode", "use guided");
}

std::optional<RtcSettings> parse_rtc_config(const Json& j, const std::string& flag, bool trained_supported) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_object())
    throw_usage("rtc_config must be null or an object of LeRobot's RTCConfig fields", flag,
                "pass null, or e.g. {\"enabled\": true, \"execution_horizon\": 10}");
  static const std::set<std::string> keys = {"enabled", "mode", "prefix_attention_schedule", "max_guidance_weight",
                                             "execution_horizon", "debug", "debug_maxlen"};
  for (const auto& [key, value] : j.items())
    if (!keys.count(key))
      throw_usage("rtc_config has no field '" + key + "'", flag + "." + key,
                  "LeRobot's RTCConfig fields: enabled, mode, prefix_attention_schedule, max_guidance_weight, "
                  "execution_horizon, debug, debug_maxlen");
  try {
    const std::string mode = j.value("mode", std::string("guided"));
    if (mode != "guided" && mode != "trained")
      throw_usage("rtc_config.mode must be 'guided' or 'trained', got '" + mode + "'", flag + ".mode",
                  "use guided (LeRobot's default)");
    if (j.value("max_guidance_weight", 10.0) <= 0)
      throw_usage("rtc_config.max_guidance_weight must be positive", flag + ".max_guidance_weight");
    if (j.value("debug_maxlen", int64_t{100}) <= 0)
      throw_usage("rtc_config.debug_maxlen must be positive", flag + ".debug_maxlen");
    if (!j.value("enabled", true)) return std::nullopt;
    RtcSettings s;
    s.trained = mode == "trained";
    check_rtc_mode(s, trained_supported, flag);
    const std::string sched = j.value("prefix_attention_schedule", std::string("LINEAR"));
    if (sched == "ZEROS") s.schedule = RtcSchedule::kZeros;
    else if (sched == "ONES") s.schedule = RtcSchedule::kOnes;
    else if (sched == "LINEAR") s.schedule = RtcSchedule::kLinear;
    else if (sched == "EXP") s.schedule = RtcSchedule::kExp;
    else
      throw_usage("unknown prefix_attention_schedule '" + sched + "'", flag + ".prefix_attention_schedule",
                  "use ZEROS, ONES, LINEAR or EXP");
    s.max_guidance_weight = j.value("max_guidance_weight", 10.0);
    s.execution_horizon = j.value("execution_horizon", int64_t{10});
    return s;
  } catch (const Json::exception& e) {
    throw_usage(std::string("rtc_config has a value of the wrong type: ") + e.what(), flag,
                "numbers for max_guidance_weight, execution_horizon and debug_maxlen; true/false for enabled and debug");
  }
}

Json rtc_config_json(const RtcSettings& s) {
  Json j = Json::object();
  j["enabled"] = true;
  j["mode"] = s.trained ? "trained" : "guided";
  j["prefix_attention_schedule"] = schedule_name(s.schedule);
  j["max_guidance_weight"] = s.max_guidance_weight;
  j["execution_horizon"] = s.execution_horizon;
  j["debug"] = false;
  j["debug_maxlen"] = 100;
  return j;
}

at::Tensor rtc_prefix_weights(RtcSchedule schedule, int64_t start, int64_t end, int64_t total) {
  start = std::min(start, end);
  torch::Tensor w;
  if (schedule == RtcSchedule::kZeros) {
    w = torch::zeros({total}, torch::kFloat);
    w.slice(0, 0, std::min(start, total)).fill_(1.0);
  } else if (schedule == RtcSchedule::kOnes) {
    w = torch::ones({total}, torch::kFloat);
    if (end < total) w.slice(0, std::max<int64_t>(end, 0), total).zero_();
  } else {
    w = linear_weights(start, end, total);
    if (schedule == RtcSchedule::kExp) w = w * torch::expm1(w).div(M_E - 1);
    if (total - end > 0) w = torch::cat({w, torch::zeros({total - end}, torch::kFloat)});
    const int64_t ones = std::min(start, total);
    if (ones > 0) w = torch::cat({torch::ones({ones}, torch::kFloat), w});
  }
  return w;
}

at::Tensor rtc_guided_velocity(const RtcSettings& settings, const RtcGuidance& g, const at::Tensor& x_t,
                               const at::Tensor& v_t, double time) {
  if (!g.prev_chunk_left_over.defined()) return v_t;
  torch::Tensor prev = g.prev_chunk_left_over.to(x_t.device(), x_t.scalar_type());
  if (prev.dim() == 2) prev = prev.unsqueeze(0);
  const int64_t b = x_t.size(0), chunk = x_t.size(1), width = x_t.size(2);
  if (prev.dim() != 3 || prev.size(0) != b || prev.size(1) > chunk || prev.size(2) > width)
    throw_usage("the previous chunk's leftover has shape " + c10::str(prev.sizes()) + " for a chunk of " +
                    c10::str(x_t.sizes()),
                "prev_chunk_left_over",
                "give (batch, steps <= chunk_size, action dims) of the previous chunk, the steps not executed yet");
  const int64_t horizon = std::min(g.execution_horizon.value_or(settings.execution_horizon), prev.size(1));
  if (prev.size(1) < chunk || prev.size(2) < width) {
    auto padded = torch::zeros({b, chunk, width}, x_t.options());
    padded.slice(1, 0, prev.size(1)).slice(2, 0, prev.size(2)).copy_(prev);
    prev = padded;
  }
  const auto weights = rtc_prefix_weights(settings.schedule, g.inference_delay, horizon, chunk)
                           .to(x_t.device())
                           .unsqueeze(0)
                           .unsqueeze(-1);
  const auto x1_t = x_t - time * v_t;
  const auto correction = (prev - x1_t) * weights;
  // The guidance weight, as LeRobot computes it in float32 0-d tensors: min(c / r², max) with
  // c = (1 - τ) / τ and 1/r² = ((1 - τ)² + τ²) / (1 - τ)², τ = 1 - time (∞ at τ = 0 becomes max).
  const auto f = torch::TensorOptions().dtype(torch::kFloat);
  const auto max_w = torch::scalar_tensor(settings.max_guidance_weight, f);
  const auto tau = torch::scalar_tensor(1.0 - time, f);
  const auto sq = (1 - tau).pow(2);
  const auto inv_r2 = (sq + tau.pow(2)) / sq;
  const auto c = torch::nan_to_num((1 - tau) / tau, c10::nullopt, settings.max_guidance_weight);
  const auto weight = torch::minimum(torch::nan_to_num(c * inv_r2, c10::nullopt, settings.max_guidance_weight), max_w);
  return v_t - weight.to(x_t.device()) * correction;
}

}  // namespace lerobot
