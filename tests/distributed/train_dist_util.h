// Test utilities for the multi-process training tests: running the lerobot-cpp CLI, a small
// reach2d dataset, tiny deterministic ACT flags, and parameter-update comparisons of checkpoints.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "lerobot/common/safetensors_torch.h"
#include "run_helper.h"
#include "support/run_command.h"

namespace lerobot_test {

using lerobot::testing::CommandResult;  // tests/support/run_command.h
using lerobot::testing::run_command;

inline std::string cli() { return LEROBOT_CLI; }

// One intra-op thread in every process the test starts (children inherit it; the trainer honours
// OMP_NUM_THREADS). The runs compared must use the same thread count: a CPU conv backward with 2
// threads rounds differently from 1 thread, and 20 clipped AdamW steps amplify that to ~5e-3
// relative (measured), above the 1e-3 bound, while equal thread counts agree to ~5e-5.
inline void one_thread_per_process() { setenv("OMP_NUM_THREADS", "1", 1); }

// torchrun's rendezvous flags for one machine: --standalone's c10d rendezvous, but on a free port of
// its own instead of --standalone's fixed 29400 (two torchrun tests run side by side under
// ctest -j collided there). The underscore spellings are the ones torchrun 1.13 and 2.x both take.
inline std::string torchrun_rendezvous() {
  const std::string port = std::to_string(lerobot::find_free_port());
  return " --rdzv_backend=c10d --rdzv_endpoint=localhost:" + port + " --rdzv_id=lerobot-test-" + port;
}

// A reach2d dataset of 20 expert episodes (64x64 images): 231 frames, enough for 20 steps of
// 8 samples inside one epoch (so no epoch boundary and no padded last batch interferes).
inline std::string make_dataset(const std::string& dir) {
  const std::string root = dir + "/ds";
  auto r = run_command(cli() + " dataset generate --env.type=reach2d --num_episodes=20 --env.image_size=64 "
                       "--output_dir=" + root);
  EXPECT_EQ(r.code, 0) << r.out;
  const std::string info = read_text(root + "/meta/info.json");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(info, m, std::regex("\"total_frames\":\\s*([0-9]+)"))) << info;
  if (!m.empty()) { EXPECT_GE(std::stoll(m[1].str()), 160) << "the dataset must hold 20 steps x 8 samples"; }
  return root;
}

// A small ACT with every source of randomness off (dropout 0, no VAE): two runs that see the same
// samples in the same updates must end with the same parameters up to float rounding.
// chunk_size 1: no action is ever padded, so ACT's loss (mean over the batch's valid action steps)
// is a plain per-sample mean. With padding, each rank's loss is normalised by its own count of
// valid steps and the average over ranks (LeRobot/accelerate semantics, like accumulation) is not
// the mean over the union of the batches.
inline std::string act_flags(const std::string& dataset) {
  return " --policy.type=act --dataset.root=" + dataset +
         " --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64 --policy.chunk_size=1"
         " --policy.n_action_steps=1 --policy.n_encoder_layers=1 --policy.n_decoder_layers=1"
         " --policy.pretrained_backbone_weights=null --policy.dropout=0 --policy.use_vae=false"
         " --policy.optimizer_lr=1e-4 --policy.optimizer_lr_backbone=1e-4 --seed=7 --num_workers=0 --log_freq=10"
         " --policy.device=cpu";  // Gloo on CPU, also on a machine with fewer GPUs than ranks
}

// The equivalence runs (1x8, 2x4, 1x4 with accumulation 2, two machines) train with plain SGD
// (gradient clipping at 10 as in ACT's preset): the update is then linear in the reduced gradient.
// AdamW divides each gradient component by its own running RMS, which turns rounding-level
// differences between batch layouts into learning-rate-sized steps on the parameters whose gradient
// is almost zero (AdamW: 4.9e-5 on Debian's 1.13, 0.09 on Debian's 2.6). The lr is 1e-4: without
// the policy preset every parameter, the randomly initialised ResNet included, trains at the run's
// lr (LeRobot's rule), and at 1e-2 its dynamics amplify rounding: 1x8 and 1x4+accumulation differed
// by 7.8e-7 after one step and by 0.05 after 20 (1e-3: 0.0064; 1e-4: 2.6e-5, while the run without
// the all-reduce stays 0.77 away).
inline std::string equivalence_flags(const std::string& dataset) {
  return act_flags(dataset) +
         " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.lr=1e-4"
         " --optimizer.weight_decay=0 --optimizer.grad_clip_norm=10";
}

inline std::string final_model(const std::string& out_dir) {
  return out_dir + "/checkpoints/last/pretrained_model/model.safetensors";
}

using Params = std::map<std::string, torch::Tensor>;

inline Params load_params(const std::string& file) {
  EXPECT_TRUE(std::filesystem::exists(file)) << file;
  if (!std::filesystem::exists(file)) return {};
  return lerobot::load_safetensors(file);
}

// ‖(x − init) − (y − init)‖ / ‖x − init‖ over every tensor (in float64), i.e. how far the parameter
// update of run y is from that of run x, relative to the size of x's update.
inline double relative_update_diff(const Params& init, const Params& x, const Params& y) {
  double num = 0, den = 0;
  EXPECT_EQ(init.size(), x.size());
  EXPECT_EQ(init.size(), y.size());
  for (const auto& [k, t0] : init) {
    auto ix = x.find(k), iy = y.find(k);
    EXPECT_TRUE(ix != x.end() && iy != y.end()) << k;
    if (ix == x.end() || iy == y.end()) return INFINITY;
    const auto a = t0.to(torch::kFloat64);
    const auto dx = ix->second.to(torch::kFloat64) - a;
    const auto dy = iy->second.to(torch::kFloat64) - a;
    num += (dx - dy).pow(2).sum().item<double>();
    den += dx.pow(2).sum().item<double>();
  }
  return den > 0 ? std::sqrt(num / den) : INFINITY;
}

// θ0: a 1-step run with learning rate 0 on the same seed. SGD with lr 0 leaves every parameter
// bit-identical (p − 0·g), so its checkpoint holds the initial parameters every other run starts
// from (rank 0's init, broadcast to the others).
inline Params initial_params(const std::string& dir, const std::string& dataset) {
  const std::string out = dir + "/init";
  auto r = run_command("timeout -k 5 120 " + cli() + " train" + equivalence_flags(dataset) +
                       " --optimizer.lr=0 --batch_size=8 --steps=1 --output_dir=" + out);
  EXPECT_EQ(r.code, 0) << r.out;
  return load_params(final_model(out));
}

}  // namespace lerobot_test
