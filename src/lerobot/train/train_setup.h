// Everything a training run needs, built from the config: output dir, process group, dataset
// and loader, policy and processors, optimizer and scheduler, gradient reducer, and (on
// --resume) the state of the checkpoint being continued.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/distributed/grad_reducer.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/distributed/process_group.h"
#include "lerobot/train/sharded_training.h"
#include "lerobot/optim/ema.h"
#include "lerobot/optim/loss_scaler.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/scheduler.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/hub/checkpoint_uploader.h"
#include "lerobot/train/heldout_loss.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

struct TrainSetup {
  TrainPipelineConfig cfg;  // resolved: output_dir, job_name, presets, features filled in
  LaunchEnv launch;
  std::shared_ptr<ProcessGroup> group;
  torch::Device device{torch::kCPU};
  fs::path output_dir;

  std::shared_ptr<LeRobotDataset> dataset;
  std::unique_ptr<DataLoader> loader;
  std::optional<HeldOutSet> heldout;  // --dataset.eval_split > 0: the held-out episodes (training uses the rest)
  PolicyPtr policy;
  PolicyProcessors processors;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<Scheduler> scheduler;  // null when the run has no scheduler (a preset without one)
  std::unique_ptr<LossScaler> scaler;      // fp16 only
  std::unique_ptr<GradReducer> reducer;    // world size > 1 only
  // Around each of the policy's units in the training forward (unit_runner.h): activation
  // checkpointing (--accelerator.activation_checkpointing.mode=full), innermost; null: none.
  std::unique_ptr<UnitRunner> checkpoint_runner;
  // --parallelism.dp_shard > 1: the sharded parameters (the optimizer steps their shards); null otherwise.
  std::unique_ptr<ShardedTraining> sharded;
  TensorMap sharded_weights;  // a sharded run's model on rank 0's host while a checkpoint is written
  std::unique_ptr<EmaModel> ema;           // --ema.enable, main process only (as LeRobot)
  std::unique_ptr<hub::CheckpointUploader> uploader;  // --save_checkpoint_to_hub, main process only
  // --peft.*: the adapters' settings and the base policy's path (adapter_config.json's
  // base_model_name_or_path); the checkpoint then holds the adapter folder, not model.safetensors.
  std::optional<lora::LoraSettings> peft;
  std::string peft_base;

  int64_t start_step = 0;
  // Of the checkpoint resumed from, when they differ from this run's (LeRobot warns and positions
  // the data from the checkpoint's values); 0 otherwise.
  int64_t resumed_batch_size = 0, resumed_world_size = 0;
  int64_t seed = 0;
  bool is_main() const { return group->rank() == 0; }
  int world_size() const { return group->world_size(); }
};

// The optimizer's parameter groups a run uses: the policy's own with its preset (ACT: the backbone
// at its own lr), else one group of every trainable parameter (LeRobot's optim/factory.py:
// get_optim_params() if use_policy_training_preset else parameters()).
std::vector<PolicyParamGroup> training_param_groups(const TrainPipelineConfig& cfg, Policy& policy);

// Builds the run. `resume_from` is the checkpoint dir when --resume=true.
std::unique_ptr<TrainSetup> make_train_setup(TrainPipelineConfig cfg, const LaunchEnv& launch,
                                             const std::optional<fs::path>& resume_from);

}  // namespace lerobot
