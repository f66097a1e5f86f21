// PI05Config's fields in LeRobot's order (configuration_pi05.py) and its own checks.
#include "lerobot/policies/pi05/configuration_pi05.h"

#include "lerobot/common/error.h"

namespace lerobot {

PI05Config::PI05Config() {
  tokenizer_max_length = 200;
  normalization_mapping_ = Json{{"VISUAL", "IDENTITY"}, {"STATE", "QUANTILES"}, {"ACTION", "QUANTILES"}};
}

void PI05Config::visit(FieldVisitor& v) {
  visit_base(v);  // n_obs_steps and device are redeclared by LeRobot's PI05Config but keep their place
  visit_model(v);
  visit_chunk(v);
  field(v, "use_visual_memory", use_visual_memory, "MEM: past camera frames, fused in the vision tower");
  field(v, "use_proprioceptive_memory", use_proprioceptive_memory, "MEM: past states, one backbone token each");
  field(v, "memory_frames", memory_frames, "MEM: frames remembered, the current one included");
  field(v, "memory_stride", memory_stride, "MEM: dataset frames between remembered frames (30: one second at 30 fps)");
  field(v, "memory_temporal_attention_every", memory_temporal_attention_every,
        "MEM: vision-tower layers between temporal attention layers");
  visit_dims(v);
  visit_flow(v);
  field(v, "rtc_training_max_delay", rtc_training_max_delay,
        "Trained RTC: longest clean action prefix sampled in training, < chunk_size (0: off)");
  visit_images(v);
  visit_tokenizer(v);
  visit_normalization(v);
  visit_training(v);
}

void PI05Config::validate() const {
  if (n_action_steps > chunk_size) validate_common(true);  // LeRobot checks this one first
  if (rtc_training_max_delay < 0 || rtc_training_max_delay >= chunk_size)
    throw_usage("rtc_training_max_delay must satisfy 0 <= delay < chunk_size (" + std::to_string(chunk_size) +
                    "), got " + std::to_string(rtc_training_max_delay),
                "policy.rtc_training_max_delay", "pass a --policy.rtc_training_max_delay below chunk_size (0: off)");
  validate_common(/*allow_trained_rtc=*/true);
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"memory_frames", memory_frames},
                                    {"memory_stride", memory_stride},
                                    {"memory_temporal_attention_every", memory_temporal_attention_every}})
    if (value < 1)
      throw_usage(std::string(name) + " must be at least 1, got " + std::to_string(value), std::string("policy.") + name,
                  std::string("pass --policy.") + name + "=1 or more");
}

std::vector<int64_t> PI05Config::memory_indices() const {
  std::vector<int64_t> out;
  for (int64_t i = -(memory_frames - 1) * memory_stride; i <= 0; i += memory_stride) out.push_back(i);
  return out;
}

std::optional<std::vector<int64_t>> PI05Config::image_observation_delta_indices() const {
  if (!use_visual_memory) return std::nullopt;
  return memory_indices();
}

std::optional<std::vector<int64_t>> PI05Config::state_observation_delta_indices() const {
  if (!use_proprioceptive_memory) return std::nullopt;
  return memory_indices();
}

}  // namespace lerobot
