// Turns a loader batch into the policy's input: device copy, uint8 cameras -> float/255, the
// rename map, then the preprocessor (normalization). LeRobot's _preprocess_dataset_batch.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

// `tasks`: each row's task string (the dataset's), for a policy that tokenizes them (SmolVLA).
Batch prepare_batch(const std::map<std::string, torch::Tensor>& tensors, const PolicyProcessors& processors,
                    const torch::Device& device, const std::vector<std::string>& tasks = {});

}  // namespace lerobot
