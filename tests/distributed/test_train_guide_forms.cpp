// LeRobot's multi-GPU guide, command by command, with only the program's name changed: each form
// runs a tiny two-step training as a user who copies it would. The forms: train_multi_gpu.sh
// --config FILE (under CUDA_VISIBLE_DEVICES=0,1), accelerate launch's `--config FILE
// policy.pretrained_path=... dataset...=... batch_size=16 wandb.enable=true` (bare overrides),
// torchrun `--config FILE batch_size=8`, `python -m torch.distributed.launch --master_port=P`
// (which adds --local_rank=N / --local-rank=N) and `--use_amp`. Every torchrun / launch here takes
// a free port of its own, so the tests can run side by side (ctest -j).
#include <fstream>

#include "train_dist_util.h"

using namespace lerobot_test;
namespace fs = std::filesystem;

namespace {

// The guide's configs/your_config.yaml: the tiny ACT of act_flags() as a YAML file, batch_size 4.
// `output_dir` is left to the command line unless given here.
std::string write_config(const std::string& dir, const std::string& dataset, const std::string& output_dir = "") {
  const std::string file = dir + "/your_config.yaml";
  std::ofstream f(file);
  f << "dataset:\n  root: " << dataset << "\n"
    << "policy:\n  type: act\n  device: cpu\n  dim_model: 32\n  n_heads: 2\n  dim_feedforward: 64\n"
       "  chunk_size: 1\n  n_action_steps: 1\n  n_encoder_layers: 1\n  n_decoder_layers: 1\n"
       "  pretrained_backbone_weights: null\n  dropout: 0.0\n  use_vae: false\n"
       "  optimizer_lr: 0.0001\n  optimizer_lr_backbone: 0.0001\n"
    << "seed: 7\nnum_workers: 0\nlog_freq: 1\nsteps: 2\nbatch_size: 4\n";
  if (!output_dir.empty()) f << "output_dir: " << output_dir << "\n";
  return file;
}

std::string launcher_script() { return (fs::path(cli()).parent_path() / "lerobot-cpp-train").string(); }

std::string checkpoint_file(const std::string& out, const std::string& name) {
  return read_text(out + "/checkpoints/000002/" + name);
}

// What every two-process guide run must leave: a step-2 checkpoint of 2 ranks.
void expect_two_rank_checkpoint(const std::string& out, const std::string& log) {
  const std::string step_info = checkpoint_file(out, "training_state/training_step.json");
  EXPECT_NE(step_info.find("\"dp_world_size\": 2"), std::string::npos) << step_info << log;
  EXPECT_NE(step_info.find("\"step\": 2"), std::string::npos) << step_info << log;
}

// The shared dataset of this test process (20 reach2d episodes, made once).
const std::string& dataset() {
  static TempDir dir;
  static const std::string root = make_dataset(dir.path);
  return root;
}

}  // namespace

// ./scripts/train_multi_gpu.sh --config configs/your_config.yaml, and with CUDA_VISIBLE_DEVICES=0,1:
// the script counts the listed GPUs and starts that many processes (here on the CPU, as the config
// says). With no GPU visible it asks for --num_processes instead of starting nothing.
TEST(GuideForms, TrainMultiGpuScriptWithConfig) {
  one_thread_per_process();
  TempDir dir;
  const std::string out = dir.path + "/out";
  const std::string config = write_config(dir.path, dataset(), out);
  const std::string script = std::string(LEROBOT_SOURCE_DIR) + "/scripts/train_multi_gpu.sh";
  auto r = run_command("CUDA_VISIBLE_DEVICES=0,1 LEROBOT_CPP=" + cli() + " timeout -k 5 180 " + script +
                       " --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 GPU(s) visible (CUDA_VISIBLE_DEVICES), starting 2 processes"), std::string::npos) << r.out;
  expect_two_rank_checkpoint(out, r.out);

  auto none = run_command("CUDA_VISIBLE_DEVICES= LEROBOT_CPP=" + cli() + " " + script + " --config " + config);
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_NE(none.out.find("pass --num_processes=N"), std::string::npos) << none.out;
}

// accelerate launch ... --config configs/policy/smolvla.yaml policy.pretrained_path=lerobot/smolvla_base
// dataset.repo_id=... batch_size=16 wandb.enable=true: overrides without dashes after the config.
// accelerate itself is not installed here; `accelerate launch --multi_gpu` runs torch's launcher with
// its ACCELERATE_* environment, which is what runs the script here (the W&B stand-in on
// PYTHONPATH). The pretrained policy is a one-step run of the same config.
TEST(GuideForms, AccelerateStyleBareOverridesAfterConfig) {
  one_thread_per_process();
  TempDir dir;
  const std::string config = write_config(dir.path, dataset());
  const std::string base = dir.path + "/base";
  auto b = run_command("timeout -k 5 120 " + cli() + " train --config " + config + " steps=1 output_dir=" + base);
  ASSERT_EQ(b.code, 0) << b.out;
  const std::string pretrained = base + "/checkpoints/last/pretrained_model";
  ASSERT_TRUE(fs::exists(pretrained + "/model.safetensors")) << b.out;

  const std::string out = dir.path + "/out", records = dir.path + "/wandb";
  fs::create_directories(records);
  auto r = run_command("ACCELERATE_MIXED_PRECISION=no ACCELERATE_DYNAMO_BACKEND=no PYTHONPATH=" +
                       std::string(LEROBOT_SOURCE_DIR) + "/tests/train/wandb_standin STANDIN_WANDB_DIR=" + records +
                       " timeout -k 5 180 " + LEROBOT_TORCHRUN + " --nproc_per_node=2 -r 1 -t 1" + torchrun_rendezvous() +
                       " " + launcher_script() + " --config " + config + " policy.pretrained_path=" + pretrained +
                       " dataset.root=" + dataset() + " batch_size=6 wandb.enable=true wandb.mode=offline output_dir=" +
                       out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("via accelerate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Fine-tuning from " + pretrained), std::string::npos) << r.out;
  expect_two_rank_checkpoint(out, r.out);
  const std::string train_config = checkpoint_file(out, "pretrained_model/train_config.json");
  EXPECT_NE(train_config.find("\"batch_size\": 6"), std::string::npos) << train_config;
  EXPECT_NE(train_config.find("\"pretrained_path\": \"" + pretrained), std::string::npos) << train_config;
  EXPECT_NE(train_config.find("\"dim_model\": 32"), std::string::npos) << train_config;  // from the config file
  int runs = 0;
  for (const auto& e : fs::directory_iterator(records)) runs += e.path().extension() == ".json";
  EXPECT_EQ(runs, 1) << "rank 0 logs to W&B, once:\n" << r.out;
}

// torchrun --nproc_per_node=8 ... --config ... batch_size=8 (two processes here).
TEST(GuideForms, TorchrunWithConfigAndBareBatchSize) {
  one_thread_per_process();
  TempDir dir;
  const std::string out = dir.path + "/out";
  const std::string config = write_config(dir.path, dataset());
  auto r = run_command("timeout -k 5 180 " + std::string(LEROBOT_TORCHRUN) + " --nproc_per_node=2 -r 1 -t 1" +
                       torchrun_rendezvous() + " " + launcher_script() + " --config " + config +
                       " batch_size=8 output_dir=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("via torchrun"), std::string::npos) << r.out;
  expect_two_rank_checkpoint(out, r.out);
  const std::string train_config = checkpoint_file(out, "pretrained_model/train_config.json");
  EXPECT_NE(train_config.find("\"batch_size\": 8"), std::string::npos) << train_config;
}

// python -m torch.distributed.launch --nproc_per_node=4 --master_port=29500 ...: the deprecated
// launcher passes the local rank as a flag before the script's own (--local_rank=N on torch 1.13,
// --local-rank=N on 2.x) and sets LOCAL_RANK too.
TEST(GuideForms, TorchDistributedLaunchWithLocalRankFlag) {
  one_thread_per_process();
  const std::string python = lerobot::testing::python_with_numpy_and_torch();
  if (run_command(python + " -c 'import torch.distributed.launch'").code != 0)
    GTEST_SKIP() << python << " has no torch.distributed.launch (removed from this torch)";
  TempDir dir;
  const std::string out = dir.path + "/out";
  const std::string config = write_config(dir.path, dataset());
  auto r = run_command("timeout -k 5 180 " + python + " -m torch.distributed.launch --nproc_per_node=2 --master_port=" +
                       std::to_string(lerobot::find_free_port()) + " -r 1 -t 1 " + launcher_script() + " --config " +
                       config + " output_dir=" + out);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_two_rank_checkpoint(out, r.out);
}

// --use_amp (LeRobot's policy.use_amp before accelerate) is mixed precision: bf16 autocast on the
// CPU (fp16 with loss scaling on CUDA), said once in the log; here through the built-in launcher,
// whose processes get it as --accelerator.mixed_precision. --use_amp=false leaves it as it was.
TEST(GuideForms, UseAmpIsMixedPrecision) {
  one_thread_per_process();
  TempDir dir;
  const std::string config = write_config(dir.path, dataset());
  const std::string out = dir.path + "/out";
  auto r = run_command("timeout -k 5 180 " + launcher_script() + " --config " + config +
                       " num_processes=2 output_dir=" + out + " --use_amp");
  ASSERT_EQ(r.code, 0) << r.out;
  expect_two_rank_checkpoint(out, r.out);
  const std::string said = "--use_amp: mixed precision bf16 (--accelerator.mixed_precision=bf16)";
  const size_t at = r.out.find(said);
  EXPECT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(said, at + 1), std::string::npos) << "said more than once:\n" << r.out;
  EXPECT_NE(checkpoint_file(out, "pretrained_model/train_config.json").find("\"mixed_precision\": \"bf16\""),
            std::string::npos);

  const std::string off = dir.path + "/off";
  auto f = run_command("timeout -k 5 120 " + launcher_script() + " --config " + config + " steps=1 output_dir=" + off +
                       " --use_amp=false");
  ASSERT_EQ(f.code, 0) << f.out;
  EXPECT_NE(f.out.find("--use_amp=false: mixed precision stays 'no'"), std::string::npos) << f.out;
  auto both = run_command(cli() + " train --config " + config + " --use_amp --accelerator.mixed_precision=bf16 output_dir=" +
                          dir.path + "/both");
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_NE(both.out.find("--use_amp and --accelerator.mixed_precision=bf16 both set"), std::string::npos) << both.out;
}

// The rewrites' edges, without training: each command fails on a later, deliberate mistake (or on
// the form itself), which shows how far the form got.
TEST(GuideForms, EdgesAndHints) {
  const std::string typo = " --policy.chunck_size=3";
  struct Case {
    std::string env, args, expect;
    int code;
  };
  const std::vector<Case> cases = {
      // The local rank, as a flag in both spellings and as a separate word, agreeing with LOCAL_RANK.
      {"LOCAL_RANK=1", "--local_rank=1" + typo, "unknown flag '--policy.chunck_size'", 2},
      {"LOCAL_RANK=0", "--local-rank 0" + typo, "unknown flag '--policy.chunck_size'", 2},
      {"env -u LOCAL_RANK", "--local-rank=3" + typo, "unknown flag '--policy.chunck_size'", 2},
      {"LOCAL_RANK=0", "--local-rank=1", "--local-rank=1 disagrees with LOCAL_RANK=0", 2},
      {"", "--local_rank=x", "bad value 'x' for --local_rank", 2},
      // A bare key=value is a flag: an unknown key gets the hint --key=value gets.
      {"", "--policy.type=act batch_sise=16", "did you mean '--batch_size'?", 2},
      {"", "--policy.type=act policy.chunck_size=3", "unknown flag '--policy.chunck_size'", 2},
      // A bare word that is not key=value is still refused.
      {"", "--policy.type=act oops", "unexpected argument 'oops'", 2},
      {"", "--policy.type=act ./x=1", "unexpected argument './x=1'", 2},
      // --config takes a value, as --config_path does; the hint knows --config_path.
      {"", "--config", "flag --config has no value", 2},
      {"", "--config=/nonexistent/c.yaml", "config file not found: /nonexistent/c.yaml", 2},
      {"", "--policy.type=act --config_pth=c.yaml", "did you mean '--config_path'?", 2},
      {"", "--policy.type=act --use_amp=maybe", "use_amp", 2},
  };
  for (const auto& c : cases) {
    auto r = run_command(c.env + " " + cli() + " train " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
  }
}
