// TrainPipelineConfig: every `lerobot-cpp train` flag, with LeRobot's names and defaults
// (configs/train.py, configs/default.py, configs/accelerator.py). Dumped as train_config.json.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lerobot/common/config/config.h"
#include "lerobot/common/cuda_config.h"
#include "lerobot/common/fs.h"
#include "lerobot/datasets/dataset_config.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/optim/ema.h"
#include "lerobot/optim/optimizer_config.h"
#include "lerobot/policies/policy_config.h"
#include "lerobot/train/lerobot_sections.h"

namespace lerobot {

struct GradientAccumulationConfig : Config {
  int64_t steps = 1;
  void visit(FieldVisitor& v) override {
    field(v, "steps", steps, "Micro-batches per optimizer update (no communication in between)");
  }
  void validate() const override;
};

struct AcceleratorConfig : Config {
  std::string mixed_precision = "no";
  GradientAccumulationConfig gradient_accumulation;
  FsdpConfig fsdp;
  DdpConfig ddp;
  CompileConfig compile;
  ActivationCheckpointingConfig activation_checkpointing;
  double loss_scale_init = 65536.0;
  void visit(FieldVisitor& v) override {
    field(v, "mixed_precision", mixed_precision, "no, bf16 or fp16 (fp16 uses dynamic loss scaling); env ACCELERATE_MIXED_PRECISION");
    field(v, "gradient_accumulation", gradient_accumulation, "Gradient accumulation");
    field(v, "fsdp", fsdp, "Sharded data parallel settings (with --parallelism.dp_shard > 1)");
    field(v, "ddp", ddp, "DDP settings (LeRobot)");
    field(v, "compile", compile, "torch.compile settings (LeRobot placeholder)");
    field(v, "activation_checkpointing", activation_checkpointing, "Activation checkpointing (LeRobot placeholder)");
    field(v, "loss_scale_init", loss_scale_init, "Initial fp16 loss scale (lerobot.cpp; GradScaler's default)");
  }
  void validate() const override;
};

struct ParallelismConfig : Config {
  int64_t dp_replicate = 1;
  int64_t dp_shard = 1;
  ContextParallelConfig context_parallel;
  int64_t cfg_parallel = 1;
  void visit(FieldVisitor& v) override {
    field(v, "dp_replicate", dp_replicate, "Data-parallel replicas (filled from the world size)");
    field(v, "dp_shard", dp_shard, "Processes that shard parameters, gradients and optimizer state (-1: all; 1: plain data parallel)");
    field(v, "context_parallel", context_parallel, "Context parallelism (LeRobot placeholder; only 1)");
    field(v, "cfg_parallel", cfg_parallel, "Classifier-free-guidance parallelism (inference only; 1 for training)");
  }
};

struct EvalConfig : Config {
  int64_t n_episodes = 50;
  int64_t batch_size = 0;
  bool use_async_envs = true;
  bool recording = false;
  std::optional<std::string> recording_repo_id;
  bool recording_private = false;
  void visit(FieldVisitor& v) override {
    field(v, "n_episodes", n_episodes, "Episodes per evaluation");
    field(v, "batch_size", batch_size, "Environments run at once (0: auto)");
    field(v, "use_async_envs", use_async_envs, "Step environments in parallel threads");
    field(v, "recording", recording, "Record eval rollouts as a dataset (not available)");
    field(v, "recording_repo_id", recording_repo_id, "Hub repo for recorded rollouts (not available)");
    field(v, "recording_private", recording_private, "Private recording repos (not available)");
  }
};

struct WandBConfig : Config {
  bool enable = false;
  bool disable_artifact = false;
  std::string project = "lerobot";
  std::optional<std::string> entity;
  std::optional<std::string> notes;
  std::optional<std::string> run_id;
  std::optional<std::string> mode;
  bool add_tags = true;
  void visit(FieldVisitor& v) override {
    field(v, "enable", enable,
          "Log to Weights & Biases from the main process (needs `pip install wandb` and `wandb login`, or "
          "--wandb.mode=offline); see docs/WANDB.md");
    field(v, "disable_artifact", disable_artifact, "Do not log checkpoints as W&B model artifacts");
    field(v, "project", project, "W&B project");
    field(v, "entity", entity, "W&B entity (user or team; default: the login's)");
    field(v, "notes", notes, "W&B run notes");
    field(v, "run_id", run_id, "W&B run id (default: a new one, saved in train_config.json so --resume=true continues the run)");
    field(v, "mode", mode, "online, offline (sync later with `wandb sync`) or disabled; default online");
    field(v, "add_tags", add_tags, "Tag the run with policy, seed, dataset and env (as LeRobot)");
  }
};

// lerobot.cpp's own distributed settings (not in LeRobot; see docs/DISTRIBUTED.md).
struct DistributedConfig : Config {
  double timeout_s = 300.0;
  std::string backend = "auto";
  bool bf16_compress = false;
  double bucket_mb = 25.0;
  bool rebuild_buckets = true;
  bool reduce_gradients = true;
  void visit(FieldVisitor& v) override {
    field(v, "timeout_s", timeout_s, "Seconds a collective may wait for a silent rank before failing, naming it");
    field(v, "backend", backend, "auto, gloo or nccl");
    field(v, "bf16_compress", bf16_compress, "All-reduce gradients in bf16");
    field(v, "bucket_mb", bucket_mb, "Gradient bucket size in MB");
    field(v, "rebuild_buckets", rebuild_buckets,
          "Re-pack the buckets after the first step in the order gradients arrived (as DDP)");
    field(v, "reduce_gradients", reduce_gradients,
          "Test/diagnostic switch: false skips the gradient all-reduce, so each rank trains on its own "
          "batches only and the replicas drift apart (rank 0's model is saved). Never use it to train");
  }
};

struct TrainPipelineConfig : Config {
  DatasetConfig dataset;
  ChoicePtr<EnvConfig> env;
  ChoicePtr<PolicyConfig> policy;
  Json reward_model = nullptr;  // LeRobot's reward-model training: non-null is refused
  std::optional<std::string> output_dir;
  std::optional<std::string> job_name;
  bool resume = false;
  std::optional<int64_t> seed = 1000;
  bool cudnn_deterministic = false;
  int64_t num_workers = 4;
  int64_t batch_size = 8;
  int64_t prefetch_factor = 4;
  bool persistent_workers = true;
  std::optional<std::string> dataloader_multiprocessing_context = "spawn";
  int64_t steps = 100000;
  int64_t env_eval_freq = 20000;
  int64_t log_freq = 200;
  int64_t eval_steps = 0;
  int64_t max_eval_samples = 0;
  double tolerance_s = 1e-4;
  bool save_checkpoint = true;
  int64_t save_freq = 20000;
  std::string checkpoint_format = "safetensors";
  bool use_policy_training_preset = true;
  ChoicePtr<OptimizerConfig> optimizer;
  ChoicePtr<SchedulerConfig> scheduler;
  ParallelismConfig parallelism;
  AcceleratorConfig accelerator;
  EvalConfig eval;
  EmaConfig ema;
  WandBConfig wandb;
  Json peft = nullptr;              // LeRobot's PeftConfig (lora::peft_config_from_json): null, no PEFT
  JobConfig job;
  bool save_checkpoint_to_hub = false;
  Json sample_weighting = nullptr;  // LeRobot's SampleWeightingConfig (RA-BC): non-null is refused
  std::map<std::string, std::string> rename_map;
  // LeRobot's `checkpoint_path` (init=False): the checkpoint a resumed run came from, written by
  // write_train_config; a value read from a file is ignored (the checkpoint is --config_path).
  std::optional<std::string> resumed_from;
  DistributedConfig distributed;
  CudaConfig cuda;
  std::string optimizer_impl = "auto";
  int64_t max_nonfinite_steps = 10;

  // Not a config field: the --config_path given on the command line (the checkpoint to resume).
  std::optional<std::string> checkpoint_path;
  // Not a config field: the keys of the command-line flags (the accepted-but-unused ones are logged).
  std::vector<std::string> given_flags;
  // Not a config field: the accepted-but-unused keys that the --config_path file sets to a value
  // other than the default (logged once with the flags).
  std::vector<std::string> file_unused_keys;

  void visit(FieldVisitor& v) override;
  void validate() const override;

 private:
  // LeRobot 0.6 settings that would change what the run learns and that lerobot.cpp lacks (PEFT,
  // sample weighting, reward models, HF Jobs, context parallelism, compile, ...): a usage error
  // naming the key (train_config_refusals.cpp).
  void refuse_unsupported_lerobot_sections() const;
};

inline constexpr const char* kExtensionConfigFile = "lerobot_cpp_config.json";

// The keys lerobot.cpp adds to LeRobot's TrainPipelineConfig, as JSON paths
// ({"distributed"}, {"accelerator", "loss_scale_init"}, ...).
const std::vector<std::vector<std::string>>& train_config_extension_keys();

// Writes the run's config into a checkpoint's pretrained_model dir: train_config.json with
// LeRobot's keys only (Python's draccus refuses keys it does not know, so a Python-side resume
// can read it) and lerobot_cpp_config.json with the extension keys. parse_train_config reads both
// back from --config_path.
void write_train_config(TrainPipelineConfig& cfg, const fs::path& dir);

// Registers every choice type (policies, optimizers, schedulers, envs). Idempotent.
void register_all_configs();

// Builds the config from command-line words: --policy.path=DIR (config.json of a pretrained
// policy), --config_path=FILE|DIR (a train_config.json, or the pretrained_model dir holding one),
// then the other flags; ACCELERATE_MIXED_PRECISION fills --accelerator.mixed_precision when the
// flag is absent.
TrainPipelineConfig parse_train_config(const std::vector<std::string>& words);

}  // namespace lerobot
