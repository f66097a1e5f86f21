// Inputs the VLA policies pad or fill (see padded_inputs.h).
#include "lerobot/policies/padded_inputs.h"

#include <limits>

#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/pi_config_base.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"

namespace lerobot {

bool fills_absent_cameras(const PolicyConfig& cfg) {
  return dynamic_cast<const PiConfigBase*>(&cfg) || dynamic_cast<const SmolVLAConfig*>(&cfg);
}

std::optional<int64_t> widest_vector(const PolicyConfig& cfg, const std::string& type) {
  if (const auto* pi = dynamic_cast<const PiConfigBase*>(&cfg)) {
    if (type == "STATE") {
      const auto* pi05 = dynamic_cast<const PI05Config*>(&cfg);
      return pi05 && !pi05->use_proprioceptive_memory ? std::numeric_limits<int64_t>::max() : pi->max_state_dim;
    }
    if (type == "ACTION") return pi->max_action_dim;
  }
  if (const auto* smol = dynamic_cast<const SmolVLAConfig*>(&cfg)) {
    if (type == "STATE") return smol->max_state_dim;
    if (type == "ACTION") return smol->max_action_dim;
  }
  return std::nullopt;
}

bool input_fits(const PolicyConfig& cfg, const PolicyFeature& feature, const std::vector<int64_t>& have) {
  if (have == feature.shape) return true;
  if (feature.type == "VISUAL") return cfg.resizes_images() && have.size() == 3 && feature.shape.size() == 3 &&
                                       have[0] == feature.shape[0];
  const auto width = widest_vector(cfg, feature.type);
  return width && have.size() == 1 && feature.shape.size() == 1 && have[0] <= *width;
}

}  // namespace lerobot
