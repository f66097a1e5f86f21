// PI0Config: every field and default of LeRobot's π0 config (policies/pi0/configuration_pi0.py),
// in its order; the fields it shares with π0.5 live in PiConfigBase. --policy.type=pi0.
#pragma once

#include "lerobot/policies/pi_config_base.h"

namespace lerobot {

class PI0Config : public PiConfigBase {
 public:
  std::string type() const override { return "pi0"; }
  void visit(FieldVisitor& v) override;
  // LeRobot's __post_init__ checks, plus ours (see PiConfigBase::validate_common).
  void validate() const override { validate_common(/*allow_trained_rtc=*/false); }
};

}  // namespace lerobot
