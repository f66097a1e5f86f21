// PI0Config's fields in LeRobot's order (configuration_pi0.py).
#include "lerobot/policies/pi0/configuration_pi0.h"

namespace lerobot {

void PI0Config::visit(FieldVisitor& v) {
  visit_base(v);  // n_obs_steps and device are redeclared by LeRobot's PI0Config but keep their place
  visit_model(v);
  visit_chunk(v);
  visit_dims(v);
  visit_flow(v);
  visit_images(v);
  visit_normalization(v);
  visit_training(v);
  visit_tokenizer(v);
}

}  // namespace lerobot
