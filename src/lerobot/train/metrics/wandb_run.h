// What a W&B run is made of, as LeRobot's WandBLogger builds it (common/wandb_utils.py): the run
// id, the tags and group name from the config, and the wandb.init arguments handed to the sidecar
// process (lerobot-cpp-wandb) that drives W&B's Python client.
#pragma once

#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

// A new run id as wandb makes them: 8 characters of [a-z0-9].
std::string new_wandb_run_id();

// LeRobot's cfg_to_group(cfg, return_list=True, truncate_tags=True): policy:<type>, seed:<seed>,
// dataset:<repo_id>, env:<type> (when set), each cut to W&B's 64-character tag limit.
std::vector<std::string> wandb_tags(const TrainPipelineConfig& cfg);
// cfg_to_group(cfg): the same parts (untruncated) joined by '-'; artifact names start with it.
std::string wandb_group(const TrainPipelineConfig& cfg);

// LeRobot's mode argument: the configured mode when it is online/offline/disabled, else online.
std::string wandb_mode(const WandBConfig& cfg);

// The run id of an earlier run in output_dir/wandb/latest-run/run-<id>.wandb (LeRobot's
// get_wandb_run_id_from_filesystem); empty when there is none.
std::string wandb_run_id_from_filesystem(const fs::path& output_dir);

// Gives cfg.wandb.run_id a value before the config is first written (so every saved
// train_config.json carries it and --resume=true continues the same run): the configured id, on
// resume the one found in output_dir/wandb, else a new one. Returns the wandb.init `resume`
// argument: "must" when continuing a run, "" for a new run.
std::string assign_wandb_run_id(TrainPipelineConfig& cfg, const fs::path& output_dir);

// The sidecar's instructions: {"init": wandb.init kwargs, "jsonl", "jsonl_offset",
// "checkpoints_dir", "existing_checkpoints", "disable_artifact", "artifact_group", "env_fps"}.
// The config in it is the train config (to_json, hence non-const), which holds no secret.
Json wandb_sidecar_spec(TrainPipelineConfig& cfg, const std::string& resume, const fs::path& output_dir,
                        const fs::path& jsonl);

}  // namespace lerobot
