// What every deployment path does with an observation before the policy sees it (InferencePolicy
// for a robot's program and `infer`, PolicyActionSource for evaluation): keys renamed by the
// processors' rename_map, those the policy does not use dropped, each kept one checked and
// converted by the caller, every input the policy needs present, the task texts tokenized for a
// policy that reads them (SmolVLA, π0: before the normalizer; π0.5: after it, its prompt built
// from the normalized state) and the normalizer.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

// (the observation's key, the policy's key for it after renaming, its feature, the tensor) -> the
// tensor for the batch (on any device); throws a usage error for a tensor the feature cannot take.
using ObservationConvert = std::function<torch::Tensor(const std::string& name, const std::string& key,
                                                       const PolicyFeature& feature, const torch::Tensor& x)>;
// Throws the caller's usage error for an input feature the observation lacks.
using MissingObservation = std::function<void(const std::string& key)>;

// Placeholder features (empty camera slots) and the cameras a policy fills when absent
// (fills_absent_cameras: π, SmolVLA) may be absent; the batch goes to `device`. `raw_state`, when
// given and the observation has observation.state: set to that state as converted, before the
// normalizer (B, S): what PolicyProcessors::postprocess_action adds back with relative actions.
Batch observation_inputs(const PolicyConfig& cfg, const PolicyProcessors& processors,
                         const std::map<std::string, torch::Tensor>& observation,
                         const std::vector<std::string>& tasks, const torch::Device& device,
                         const ObservationConvert& convert, const MissingObservation& missing,
                         torch::Tensor* raw_state = nullptr);

}  // namespace lerobot
