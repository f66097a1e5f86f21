// --dataset.repo_id without --dataset.root: where LeRobot 0.6 finds or puts the dataset
// (LeRobotDatasetMetadata): $HF_LEROBOT_HOME/<repo_id> when a dataset is there, else the
// revision-safe snapshot cache $HF_LEROBOT_HOME/hub/datasets--org--name/, filled with meta/
// first and then only the data and video files of the selected episodes.
#pragma once

#include "lerobot/common/fs.h"
#include "lerobot/datasets/dataset_config.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot {

// The local dataset root for `cfg` (which has a repo_id and no root). The revision defaults to
// v3.0, chosen among the repo's version refs like LeRobot's get_safe_version (v2.1 taken, with
// a warning, when the repo has no v3.x).
fs::path resolve_hub_dataset(const DatasetConfig& cfg, const hub::HubClient& client);

}  // namespace lerobot
