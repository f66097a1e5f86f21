// Shared policy config checks (see config_checks.h).
#include "lerobot/policies/config_checks.h"

#include <string>

#include "lerobot/common/error.h"

namespace lerobot {

void check_positive_policy_fields(std::initializer_list<std::pair<const char*, int64_t>> fields) {
  for (const auto& [name, value] : fields)
    if (value < 1)
      throw_usage(std::string(name) + " must be >= 1, got " + std::to_string(value), std::string("policy.") + name,
                  std::string("pass --policy.") + name + "=<a positive integer>");
}

}  // namespace lerobot
