// --policy.push_to_hub: LeRobot's publish_trained_model in lerobot.cpp (and the checks that
// --save_checkpoint_to_hub shares with it). Checked twice before any
// work (the flags when parsed; the token against the Hub's whoami before the first step), so a
// long run cannot fail at its end for a missing token or a bad repo id; then, after the last
// checkpoint, rank 0 uploads pretrained_model/ and a README.md model card in one commit.
#pragma once

#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

struct DatasetMetadata;
struct TrainSetup;

// Whether the run uploads: --policy.push_to_hub (the trained policy, at the end) or
// --save_checkpoint_to_hub (every checkpoint, as it is saved: hub/checkpoint_uploader.h).
bool writes_to_hub(const TrainPipelineConfig& cfg);

// LeRobot's validate(): push_to_hub and save_checkpoint_to_hub need policy.repo_id, a valid Hub
// repo id. Usage errors.
void check_publish_flags(const TrainPipelineConfig& cfg);

// Before training (the main process): a token is there (HF_TOKEN or the file `hf auth login`
// writes), the Hub is not in offline mode, whoami-v2 accepts the token, the token can write
// and its user may write to the repo's namespace. A bare --policy.repo_id=name becomes
// <user>/name in `cfg` (as create_repo does). Does nothing when the run does not write to the Hub.
void preflight_publish(TrainPipelineConfig& cfg, const hub::HubClient& client);

// The model card (README.md): LeRobot's card metadata (license, library_name lerobot,
// pipeline_tag robotics, tags, model_name, datasets) and a short description of the run.
std::string make_model_card(const TrainPipelineConfig& cfg, const DatasetMetadata* meta, const std::string& repo_id);

// Uploads the files of `pretrained_dir` (*.json, *.safetensors, *.yaml, *.md) and the model
// card to `repo_id` (created if missing, policy.private honoured) in one commit.
hub::CommitResult publish_pretrained_model(const TrainPipelineConfig& cfg, const DatasetMetadata* meta,
                                           const fs::path& pretrained_dir, const std::string& repo_id,
                                           const hub::HubClient& client);

// After training, on the main process: publishes the final checkpoint's pretrained_model/ (or,
// with --save_checkpoint=false, the same files written for it) to policy.repo_id; with EMA on,
// the EMA weights also go to <repo_id>-ema as LeRobot does (a failure there is a warning). A
// --peft.* run's pretrained_model/ holds the adapter folder instead of model.safetensors, so what
// goes up is what LeRobot's publish_trained_model(peft_model=...) pushes: adapter_config.json,
// adapter_model.safetensors, config.json (use_peft), processors, train_config.json and the card.
void publish_trained_policy(TrainSetup& s);

}  // namespace lerobot
