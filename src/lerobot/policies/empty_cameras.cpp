// Empty camera slots and order-keeping input features (see empty_cameras.h).
#include "lerobot/policies/empty_cameras.h"

#include <algorithm>

namespace lerobot {

namespace {
const std::string kEmptyCameraPrefix = "observation.images.empty_camera_";
}

std::string empty_camera_key(int64_t i) { return kEmptyCameraPrefix + std::to_string(i); }

bool is_empty_camera_key(const std::string& key) { return key.rfind(kEmptyCameraPrefix, 0) == 0; }

void add_input_feature(PolicyConfig& cfg, const std::string& key, PolicyFeature feature) {
  cfg.input_features[key] = std::move(feature);
  auto& order = cfg.input_feature_order;
  if (!order.empty() && std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
}

void add_empty_cameras(PolicyConfig& cfg, int64_t n, const std::vector<int64_t>& shape) {
  for (int64_t i = 0; i < n; ++i) add_input_feature(cfg, empty_camera_key(i), PolicyFeature{"VISUAL", shape});
}

}  // namespace lerobot
