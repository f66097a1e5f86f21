// dist_test_helper's "sharded" mode (sharded_helper.cpp).
#pragma once

#include <memory>
#include <string>

#include "lerobot/distributed/process_group.h"

namespace lerobot_test {
// variant: "reshard" (default), "keep" (reshard_after_forward=false), "accum" (2 micro-steps),
// "sgd" (plain SGD without clipping instead of AdamW with clipping).
int sharded(std::shared_ptr<lerobot::ProcessGroup> pg, const std::string& out_dir, const std::string& variant);
}  // namespace lerobot_test
