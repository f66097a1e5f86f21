// Checks policy configs share (their validate()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

namespace lerobot {

// Each (field name, value) must be >= 1; else a usage error naming --policy.<field>.
void check_positive_policy_fields(std::initializer_list<std::pair<const char*, int64_t>> fields);

}  // namespace lerobot
