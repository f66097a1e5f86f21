// Real-time chunking (LeRobot's RTC, its "guided" mode, policies/rtc/) for flow-matching policies
// (SmolVLA): while the robot executes the previous chunk, the next one is predicted, and its
// denoising is pulled toward the part of the previous chunk the robot has not executed yet, so the
// two join smoothly. The pull is weighted per step by a prefix schedule: full for the steps that
// run while the prediction runs (inference_delay), fading out by execution_horizon.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

#include "lerobot/common/config/json.h"
#include "lerobot/policies/policy.h"

namespace lerobot {

enum class RtcSchedule { kZeros, kOnes, kLinear, kExp };

// LeRobot's RTCConfig (mode "guided"; its debug tracking is not ported and has no effect).
struct RtcSettings {
  RtcSchedule schedule = RtcSchedule::kLinear;
  double max_guidance_weight = 10.0;
  int64_t execution_horizon = 10;
  // mode "trained" (π0.5 trained with rtc_training_max_delay): no guidance; the first
  // inference_delay actions are the previous chunk's, held clean while the rest is denoised.
  bool trained = false;
};

// The settings of a policy's rtc_config as config.json keeps it (LeRobot's RTCConfig fields);
// std::nullopt for null or enabled=false. What LeRobot refuses is a usage error naming `flag`
// (mode other than guided/trained, max_guidance_weight or debug_maxlen <= 0, an unknown schedule
// or key), and so is mode "trained" unless `trained_supported` (LeRobot accepts it for a pi05
// trained with rtc_training_max_delay > 0 only).
std::optional<RtcSettings> parse_rtc_config(const Json& rtc_config, const std::string& flag,
                                            bool trained_supported = false);
// Mode "trained" on a policy that was not trained for it (trained_supported false): a usage error
// naming `flag`.mode, as LeRobot's RTCProcessor refuses it.
void check_rtc_mode(const RtcSettings& settings, bool trained_supported, const std::string& flag);
// The config.json form of `settings` (enabled, LeRobot's key order and defaults).
Json rtc_config_json(const RtcSettings& settings);

// LeRobot's RTCProcessor.get_prefix_weights(start, end, total): float32 (total) on the CPU.
at::Tensor rtc_prefix_weights(RtcSchedule schedule, int64_t start, int64_t end, int64_t total);

// What one chunk prediction is guided toward.
struct RtcGuidance {
  // The previous chunk's actions not executed yet, in the policy's output space (normalized,
  // before the postprocessor): (B, T', A') with T' <= chunk and A' <= the denoised width (zero
  // padded, as LeRobot pads). Undefined: the first chunk, no guidance.
  at::Tensor prev_chunk_left_over;
  int64_t inference_delay = 0;              // steps that run while this prediction runs
  std::optional<int64_t> execution_horizon; // default: the settings'; at most T'
};

// One Euler step's velocity with the guidance applied (LeRobot's RTCProcessor.denoise_step at
// flow time `time`, 1 = noise): v - w(time) * (prev - (x_t - time * v)) * weights. LeRobot takes
// that correction through autograd, but its velocity is computed before x_t requires grad, so
// the Jacobian is the identity and the correction is the weighted error itself, as here.
at::Tensor rtc_guided_velocity(const RtcSettings& settings, const RtcGuidance& guidance, const at::Tensor& x_t,
                               const at::Tensor& v_t, double time);

// A policy that predicts chunks with real-time chunking.
class RtcPolicy {
 public:
  virtual ~RtcPolicy() = default;
  // LeRobot's `policy.config.rtc_config = ...; policy.init_rtc_processor()`: on with `settings`,
  // off with std::nullopt (config.json records it).
  virtual void set_rtc(std::optional<RtcSettings> settings) = 0;
  virtual const std::optional<RtcSettings>& rtc() const = 0;
  // LeRobot's predict_action_chunk(batch, inference_delay=, prev_chunk_left_over=,
  // execution_horizon=): (B, chunk, A) in the policy's output space. `noise` (B, chunk, width):
  // undefined draws it. A usage error when real-time chunking is off.
  virtual at::Tensor predict_action_chunk_rtc(const Batch& batch, const RtcGuidance& guidance,
                                              const at::Tensor& noise = at::Tensor()) = 0;
};

}  // namespace lerobot
