// PI05Config: every field and default of LeRobot's π0.5 config (policies/pi05/configuration_pi05.py),
// in its order: PiConfigBase's fields (tokenizer_max_length 200, QUANTILES for state and action)
// plus MEM observation memory and trained RTC.
// --policy.type=pi05.
#pragma once

#include "lerobot/policies/pi_config_base.h"

namespace lerobot {

class PI05Config : public PiConfigBase {
 public:
  // MEM short-horizon memory: past camera frames fused in the vision tower, past states as one
  // backbone token each; memory_frames frames memory_stride dataset frames apart.
  bool use_visual_memory = false;
  bool use_proprioceptive_memory = false;
  int64_t memory_frames = 6;
  int64_t memory_stride = 30;
  int64_t memory_temporal_attention_every = 4;
  // Trained RTC: the longest clean action prefix sampled in training (0: off).
  int64_t rtc_training_max_delay = 0;

  PI05Config();
  std::string type() const override { return "pi05"; }
  void visit(FieldVisitor& v) override;
  // LeRobot's __post_init__ checks (rtc_training_max_delay in [0, chunk_size), memory_* >= 1),
  // plus ours (see PiConfigBase::validate_common); rtc_config.mode "trained" is accepted.
  void validate() const override;

  // The frames the sampler loads for the cameras / the state with visual / proprioceptive memory:
  // -(memory_frames-1)*memory_stride .. 0 in steps of memory_stride; nullopt when off.
  std::optional<std::vector<int64_t>> image_observation_delta_indices() const override;
  std::optional<std::vector<int64_t>> state_observation_delta_indices() const override;

 private:
  std::vector<int64_t> memory_indices() const;
};

}  // namespace lerobot
