// Helpers of the #15 train-layer tests (see train_test_helpers.h).
#include "train_test_helpers.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/record.h"
#include "lerobot/train/train_config.h"
#include "support/process_temp_dir.h"

namespace lerobot::testing {

fs::path train_scratch() {
  static const fs::path dir = [] {
    return lerobot::testing::fresh_temp_dir("train");
  }();
  return dir;
}

const fs::path& reach2d_dataset() {
  static const fs::path root = [] {
    Reach2dEnvConfig env;
    env.image_size = 64;
    return record_expert_dataset(env, 6, train_scratch() / "reach2d").root;
  }();
  return root;
}

std::vector<std::string> tiny_act_run(const fs::path& out, int64_t steps, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--policy.type=act", "--dataset.root=" + reach2d_dataset().string(),
                                   "--policy.dim_model=32", "--policy.n_heads=2", "--policy.dim_feedforward=64",
                                   "--policy.n_encoder_layers=1", "--policy.n_vae_encoder_layers=1",
                                   "--policy.chunk_size=5", "--policy.n_action_steps=5",
                                   "--policy.pretrained_backbone_weights=null", "--batch_size=4",
                                   "--steps=" + std::to_string(steps), "--log_freq=1", "--num_workers=0",
                                   "--output_dir=" + out.string(), "--seed=7"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TrainResult run_train(const std::vector<std::string>& args) { return train(parse_train_config(args), LaunchEnv{}); }

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

fs::path copy_dataset(const std::string& name) {
  const fs::path dst = train_scratch() / name;
  fs::remove_all(dst);
  fs::copy(reach2d_dataset(), dst, fs::copy_options::recursive);
  return dst;
}

void edit_json(const fs::path& file, const std::function<void(Json&)>& edit) {
  Json j = load_json_or_yaml(file);
  edit(j);
  write_file_atomic(file, dump_pretty(j));
}

int count_different_tensors(const fs::path& a, const fs::path& b) {
  const TensorMap ta = load_safetensors(a), tb = load_safetensors(b);
  int differ = 0;
  for (const auto& [k, v] : ta) {
    auto it = tb.find(k);
    if (it == tb.end() || !torch::equal(v, it->second)) ++differ;
  }
  for (const auto& [k, v] : tb)
    if (!ta.count(k)) ++differ;
  return differ;
}

void expect_same_model_and_optimizer(const fs::path& a, const fs::path& b) {
  ASSERT_TRUE(fs::exists(b / "pretrained_model/model.safetensors")) << b;
  EXPECT_EQ(count_different_tensors(a / "pretrained_model/model.safetensors", b / "pretrained_model/model.safetensors"), 0);
  EXPECT_EQ(count_different_tensors(a / "training_state/optimizer_state.safetensors",
                                    b / "training_state/optimizer_state.safetensors"), 0);
}

TensorMap checkpoint_weights(const fs::path& run, int step) {
  char name[16];
  std::snprintf(name, sizeof name, "%06d", step);
  return load_safetensors(run / "checkpoints" / name / "pretrained_model/model.safetensors");
}

std::string flags_without(const std::vector<std::string>& args, const std::vector<std::string>& without) {
  std::string out;
  for (const auto& a : args) {
    bool keep = true;
    for (const auto& name : without) keep = keep && a.rfind("--" + name + "=", 0) != 0;
    if (keep) out += " " + a;
  }
  return out;
}

}  // namespace lerobot::testing
