// The per-GPU memory of a sharded run (see shard_memory.h for what is counted and left out).
#include "lerobot/train/shard_memory.h"

#include <algorithm>

#include "lerobot/policies/pi/pi_sizing.h"
#include "lerobot/policies/pi_config_base.h"

namespace lerobot {

int64_t shard_of(int64_t bytes, int64_t n) { return (bytes + n - 1) / n; }

int64_t ShardMemory::sharded() const { return parameters + gradients + optimizer + host; }

int64_t ShardMemory::device() const {
  return parameters + gradients + optimizer + outside_units + gathered_units + unit_gradient + activations.value_or(0);
}

ShardMemory shard_memory(const ModelBytes& m, const ShardPlan& plan) {
  const int64_t n = plan.dp_shard;
  ShardMemory s;
  s.parameters = shard_of(m.weights, n);
  s.gradients = shard_of(m.gradients, n);
  if (plan.cpu_offload)
    s.host = shard_of(m.optimizer, n) + shard_of(4 * m.trained_parameters, n);
  else
    s.optimizer = shard_of(m.optimizer, n);
  s.activations = m.activations;
  if (n > 1) {
    s.outside_units = m.outside_units;
    s.gathered_units = plan.reshard_after_forward ? std::min<int64_t>(2, m.units) * m.largest_unit : m.all_units;
    s.unit_gradient = m.largest_unit_gradients;
  }
  return s;
}

ModelBytes pi_model_bytes(const PiConfigBase& config, int64_t batch, int64_t cameras, bool gradient_checkpointing) {
  const bool pi05 = config.type() == "pi05";
  const PaliGemmaArch arch = paligemma_arch(config);
  const PiSize size = pi_size(arch, pi05, config.max_state_dim, config.max_action_dim, config.freeze_vision_encoder,
                              config.train_expert_only, pi_proprio_memory(config));
  const PiUnitBytes u =
      pi_unit_bytes(arch, pi05, config.dtype, config.freeze_vision_encoder, config.train_expert_only);
  ModelBytes m;
  m.weights = size.weight_bytes(config.dtype);
  m.gradients = size.gradient_bytes(config.dtype);
  m.optimizer = size.optimizer_bytes(config.dtype);
  for (const auto& p : size.parts) m.trained_parameters += p.trainable && p.read ? p.parameters : 0;
  m.units = u.pairs + u.vision_layers;
  m.all_units = u.pairs * u.pair_weights + u.vision_layers * u.vision_layer_weights;
  m.outside_units = m.weights - m.all_units;
  const bool pair = u.pair_weights >= u.vision_layer_weights;
  m.largest_unit = pair ? u.pair_weights : u.vision_layer_weights;
  m.largest_unit_gradients = std::max(u.pair_gradients, u.vision_layer_gradients);
  m.largest_unit_name = pair ? "a joint layer pair" : "a SigLIP layer";
  const int64_t patches = arch.vision.patches_per_side() * arch.vision.patches_per_side();
  const int64_t prefix = cameras * patches + config.tokenizer_max_length;
  const int64_t suffix = config.chunk_size + (pi05 ? 0 : 1);
  const bool vision_trains = !config.freeze_vision_encoder && !config.train_expert_only;
  m.activations = batch * pi_activation_bytes(arch, pi05, config.dtype, gradient_checkpointing, cameras, prefix, suffix,
                                              vision_trains)
                              .peak;
  return m;
}

}  // namespace lerobot
