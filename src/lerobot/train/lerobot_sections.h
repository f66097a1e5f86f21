// Sections of LeRobot 0.6's TrainPipelineConfig whose runtime has no counterpart in lerobot.cpp
// (FSDP/DDP/compile/activation-checkpointing knobs, context parallelism, HF Jobs): declared with
// LeRobot's names, order and defaults so a train_config.json written by Python LeRobot parses and
// ours stays loadable by it. Values that would change what a run learns are refused by
// TrainPipelineConfig::validate(); the rest are listed in unused_flags.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"

namespace lerobot {

struct FsdpConfig : Config {
  bool reshard_after_forward = true;
  std::optional<std::vector<std::string>> wrap_modules;
  std::optional<int64_t> min_num_params;
  bool cpu_offload = false;
  std::optional<std::string> ignored_modules;
  void visit(FieldVisitor& v) override {
    field(v, "reshard_after_forward", reshard_after_forward, "Release a unit's gathered parameters after its forward (false: keep them until its backward)");
    field(v, "wrap_modules", wrap_modules, "Unit classes to shard one at a time (default: the policy's declared units)");
    field(v, "min_num_params", min_num_params, "Shard the declared units with at least this many parameters (instead of wrap_modules)");
    field(v, "cpu_offload", cpu_offload, "Sharded runs: the optimizer state and the shards it steps on the host (CPU AdamW), a copy of the shards on the device");
    field(v, "ignored_modules", ignored_modules, "Modules left unsharded (not supported: a value is refused)");
  }
};

struct DdpConfig : Config {
  bool find_unused_parameters = true;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  void visit(FieldVisitor& v) override {
    field(v, "find_unused_parameters", find_unused_parameters, "torch DDP option (our reducer needs none)");
    field(v, "gradient_as_bucket_view", gradient_as_bucket_view, "torch DDP option (our reducer needs none)");
    field(v, "static_graph", static_graph, "torch DDP option (our reducer needs none)");
  }
};

struct CompileConfig : Config {
  bool enabled = false;
  std::string backend = "inductor";
  std::optional<std::string> mode;
  bool regional = true;
  void visit(FieldVisitor& v) override {
    field(v, "enabled", enabled, "torch.compile (a placeholder in LeRobot 0.6; true is refused)");
    field(v, "backend", backend, "torch.compile backend");
    field(v, "mode", mode, "torch.compile mode");
    field(v, "regional", regional, "torch.compile per wrap unit");
  }
};

struct ActivationCheckpointingConfig : Config {
  std::string mode = "none";
  void visit(FieldVisitor& v) override {
    field(v, "mode", mode, "none (full is a placeholder in LeRobot 0.6 and refused)");
  }
};

struct ContextParallelConfig : Config {
  int64_t ring_degree = 1;
  int64_t ulysses_degree = 1;
  void visit(FieldVisitor& v) override {
    field(v, "ring_degree", ring_degree, "Ring context parallelism (only 1)");
    field(v, "ulysses_degree", ulysses_degree, "Ulysses context parallelism (only 1)");
  }
};

// LeRobot's JobConfig: where the run happens. A Hugging Face Jobs flavor (anything but null or
// "local") is refused: lerobot.cpp trains on this machine.
struct JobConfig : Config {
  std::optional<std::string> target;
  std::string image = "huggingface/lerobot-gpu:latest";
  std::optional<std::string> timeout = "2d";
  bool detach = false;
  std::vector<std::string> tags;
  void visit(FieldVisitor& v) override {
    field(v, "target", target, "null or local (HF Jobs flavors are refused: the run is local)");
    field(v, "image", image, "HF Jobs image (remote runs only)");
    field(v, "timeout", timeout, "HF Jobs time limit (remote runs only)");
    field(v, "detach", detach, "HF Jobs: submit and exit (remote runs only)");
    field(v, "tags", tags, "HF Jobs tags (remote runs only)");
  }
  bool is_remote() const { return target && *target != "local"; }
};

}  // namespace lerobot
