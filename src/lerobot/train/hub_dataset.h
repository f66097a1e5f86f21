// --dataset.repo_id: where LeRobot 0.6 finds or puts the dataset (LeRobotDatasetMetadata):
// --dataset.root when given (downloaded into it when it holds no dataset yet), else
// $HF_LEROBOT_HOME/<repo_id> when a dataset is there, else the revision-safe snapshot cache
// $HF_LEROBOT_HOME/hub/datasets--org--name/; meta/ first, then only the data and video files of
// the selected episodes.
#pragma once

#include "lerobot/common/fs.h"
#include "lerobot/datasets/dataset_config.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot {

// True when `cfg` names a Hub dataset (repo_id "org/name") that is not on disk yet: no root, or
// a root without meta/info.json (LeRobot then downloads into that root).
bool dataset_needs_download(const DatasetConfig& cfg);

// The local dataset root for `cfg` (which has a repo_id). Without a root: LeRobot's local copy
// or its snapshot cache. With a root: the files downloaded into it (huggingface_hub's local_dir
// mode, .cache/huggingface/download/ bookkeeping), as LeRobotDatasetMetadata does. The revision
// defaults to v3.0, chosen among the repo's version refs like LeRobot's get_safe_version (v2.1
// taken, with a warning, when the repo has no v3.x).
fs::path resolve_hub_dataset(const DatasetConfig& cfg, const hub::HubClient& client);

}  // namespace lerobot
