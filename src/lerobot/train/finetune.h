// Fine-tuning (`train --policy.path=DIR` without --resume, LeRobot §1.1/§8.3): the run's policy
// starts from DIR's weights, loaded strictly; the config is the checkpoint's with the --policy.*
// overrides that leave the weights' shapes alone; the normalizer takes the new dataset's stats
// (done by the caller, as for a fresh run).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

// Checks that `config` (the checkpoint's config.json plus flags, features filled from `meta`)
// still describes the checkpoint's network and that the dataset has every input the policy reads,
// then builds the policy and loads config.pretrained_path/model.safetensors into it strictly.
// Errors: a --policy.* flag that changes the architecture -> usage; a dataset feature that is
// missing or shaped differently -> data; a missing, truncated or mismatched checkpoint -> checkpoint.
// rename_map: {dataset key: policy key} (--rename_map), applied to the dataset's features first.
PolicyPtr load_finetune_policy(const PolicyConfig& config, const DatasetMetadata& meta,
                               const std::map<std::string, std::string>& rename_map, const torch::Device& device);

}  // namespace lerobot
