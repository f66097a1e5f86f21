// The device a subcommand runs a policy on, from --policy.device (eval, infer).
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

namespace lerobot::app {

// `requested` null: the GPU when there is one (LeRobot auto-selects the device too). An unknown
// name is a usage error naming --policy.device; "cuda" without a CUDA device warns and gives the CPU.
c10::Device pick_policy_device(const std::optional<std::string>& requested);

}  // namespace lerobot::app
