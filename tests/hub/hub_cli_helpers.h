// Helpers for the hub tests that run the built `lerobot-cpp` against the local Hub server: the
// command runner, the Hub environment variables for the child processes, a tiny ACT's flags, and
// torchvision-shaped ResNet18 weights (as timm publishes them) made without torch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lerobot/common/fs.h"
#include "support/run_command.h"

namespace lerobot::hub::testing {

using lerobot::testing::run_cli;  // tests/support/run_command.h

// A tiny ACT (the flags of tests/train's tiny run), random backbone, one step.
inline const char* kTinyAct =
    " --policy.type=act --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64"
    " --policy.n_encoder_layers=1 --policy.n_vae_encoder_layers=1 --policy.chunk_size=5 --policy.n_action_steps=5"
    " --policy.pretrained_backbone_weights=null --batch_size=4 --steps=1 --log_freq=1 --num_workers=0 --seed=7";

// Sets HF_ENDPOINT and HF_HOME for the child processes (clearing the other Hub variables) and
// restores the old values when it goes.
class HubEnvironment {
 public:
  HubEnvironment(const std::string& endpoint, const fs::path& home);
  ~HubEnvironment();

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

// A resnet18 state dict with torchvision's names and shapes (conv1, bn1, layer1..4, fc), random
// values (running_var > 0), written as safetensors: what timm/resnet18.tv_in1k holds.
void write_resnet18_weights(const fs::path& path, unsigned seed);

// The requests of a hub_server.py log whose path contains `part`.
int count_requests(const std::vector<std::string>& request_paths, const std::string& part);

}  // namespace lerobot::hub::testing
