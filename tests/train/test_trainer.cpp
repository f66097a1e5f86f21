// The training loop end to end on a generated reach2d dataset: exact resume, crash during a
// checkpoint write, mixed precision with fp16 overflow, TensorBoard/JSONL output, early flag errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/distributed/launch_env.h"
#include "support/run_command.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/record.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/policies/inference.h"
#include "lerobot/train/metrics/tensorboard.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/trainer.h"
#include "support/process_temp_dir.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

fs::path scratch() {
  static const fs::path dir = [] {
    return lerobot::testing::fresh_temp_dir("trainer");
  }();
  return dir;
}

// A small reach2d expert dataset, recorded once per test binary.
const fs::path& dataset() {
  static const fs::path root = [] {
    Reach2dEnvConfig env;
    env.image_size = 64;
    return record_expert_dataset(env, 6, scratch() / "reach2d").root;
  }();
  return root;
}

std::vector<std::string> tiny_run(const fs::path& out, int64_t steps, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--policy.type=act", "--dataset.root=" + dataset().string(),
                                   "--policy.dim_model=32", "--policy.n_heads=2", "--policy.dim_feedforward=64",
                                   "--policy.n_encoder_layers=1", "--policy.n_vae_encoder_layers=1",
                                   "--policy.chunk_size=5", "--policy.n_action_steps=5",
                                   "--policy.pretrained_backbone_weights=null", "--batch_size=4",
                                   "--steps=" + std::to_string(steps), "--log_freq=2", "--num_workers=2",
                                   "--output_dir=" + out.string(), "--seed=7"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TrainResult run(const std::vector<std::string>& args) {
  return train(parse_train_config(args), LaunchEnv{});
}

std::vector<Json> jsonl(const fs::path& p) {
  std::vector<Json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

void expect_same_tensors(const fs::path& a, const fs::path& b) {
  const TensorMap ta = load_safetensors(a), tb = load_safetensors(b);
  ASSERT_EQ(ta.size(), tb.size()) << a << " vs " << b;
  for (const auto& [k, v] : ta) {
    ASSERT_TRUE(tb.count(k)) << k;
    EXPECT_TRUE(torch::equal(v, tb.at(k))) << k << " differs between " << a << " and " << b;
  }
}

// --seed=null (LeRobot: `if cfg.seed is not None: set_seed(...)`): the generators are not seeded,
// so two such runs start from different weights and the log names the seed they got; a fixed seed
// gives the same weights twice.
TEST(Trainer, SeedNullLeavesTheGeneratorsUnseededAndSaysFromWhat) {
  auto weights_after_one_step = [](const std::string& name, const std::string& seed, std::string* log) {
    const fs::path out = scratch() / name;
    std::vector<std::string> args = tiny_run(out, 1, {"--save_freq=1", "--optimizer.lr=0", "--seed=" + seed,
                                                      "--use_policy_training_preset=false", "--optimizer.type=adamw"});
    std::string cmd;
    for (const auto& a : args) cmd += " " + a;
    const int code = testing::run_cli("train" + cmd, log);
    EXPECT_EQ(code, 0) << *log;
    return load_safetensors(out / "checkpoints/000001/pretrained_model/model.safetensors");
  };
  std::string log_a, log_b, log_c, log_d;
  const auto a = weights_after_one_step("seed_null_a", "null", &log_a);
  const auto b = weights_after_one_step("seed_null_b", "null", &log_b);
  const auto c = weights_after_one_step("seed_7_c", "7", &log_c);
  const auto d = weights_after_one_step("seed_7_d", "7", &log_d);
  const std::string key = "model.action_head.weight";
  EXPECT_FALSE(torch::equal(a.at(key), b.at(key))) << "two unseeded runs drew the same initial weights";
  EXPECT_TRUE(torch::equal(c.at(key), d.at(key))) << "--seed=7 twice must give the same weights";
  EXPECT_NE(log_a.find("--seed=null: LibTorch's generators start from"), std::string::npos) << log_a;
  EXPECT_EQ(log_c.find("--seed=null"), std::string::npos) << log_c;
}

TEST(Trainer, ResumeContinuesBitIdentically) {
  const fs::path full = scratch() / "full", part = scratch() / "part";
  run(tiny_run(full, 6, {"--save_freq=3"}));
  run(tiny_run(part, 3, {"--save_freq=3"}));
  // Continue the 3-step run to step 6 from its `last` checkpoint.
  run({"--resume=true", "--config_path=" + (part / "checkpoints/last/pretrained_model").string(), "--steps=6",
       "--save_freq=3"});
  const fs::path a = full / "checkpoints/000006", b = part / "checkpoints/000006";
  ASSERT_TRUE(fs::exists(b / "pretrained_model/model.safetensors"));
  expect_same_tensors(a / "pretrained_model/model.safetensors", b / "pretrained_model/model.safetensors");
  expect_same_tensors(a / "training_state/optimizer_state.safetensors",
                      b / "training_state/optimizer_state.safetensors");
  // The comparison can fail: training moved the weights away from the step-3 checkpoint.
  const TensorMap w3 = load_safetensors(full / "checkpoints/000003/pretrained_model/model.safetensors");
  const TensorMap w6 = load_safetensors(a / "pretrained_model/model.safetensors");
  EXPECT_FALSE(torch::equal(w3.at("model.action_head.weight"), w6.at("model.action_head.weight")));
  // The resumed run appended to the metrics file and kept LeRobot's checkpoint layout.
  const auto lines = jsonl(part / "train_metrics.jsonl");
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.back()["step"], 6);
  for (const char* f : {"config.json", "model.safetensors", "train_config.json", "policy_preprocessor.json",
                        "policy_postprocessor.json", "policy_preprocessor_step_3_normalizer_processor.safetensors",
                        "policy_postprocessor_step_0_unnormalizer_processor.safetensors"})
    EXPECT_TRUE(fs::exists(b / "pretrained_model" / f)) << f;
  for (const char* f : {"optimizer_state.safetensors", "optimizer_param_groups.json", "rng_state.safetensors",
                        "training_step.json"})
    EXPECT_TRUE(fs::exists(b / "training_state" / f)) << f;
}

// An evaluation right after a checkpoint (both every 3 steps) draws Diffusion's denoising noise: it
// runs on a fork of the generators, so the run that evaluated and the run resumed from that
// checkpoint draw the same noise and timesteps from step 4 on.
TEST(Trainer, DiffusionResumesBitIdenticallyAcrossAnEvaluation) {
  const fs::path full = scratch() / "diff_full", part = scratch() / "diff_part";
  auto diffusion = [&](const fs::path& out, int64_t steps) {
    return std::vector<std::string>{
        "--policy.type=diffusion", "--dataset.root=" + dataset().string(), "--policy.down_dims=[16,32]",
        "--policy.horizon=8", "--policy.n_action_steps=4", "--policy.num_inference_steps=2",
        "--policy.pretrained_backbone_weights=null", "--batch_size=2", "--steps=" + std::to_string(steps),
        "--save_freq=3", "--log_freq=3", "--num_workers=0", "--seed=7", "--output_dir=" + out.string(),
        "--env.type=reach2d", "--env.image_size=64", "--env.episode_length=8", "--env_eval_freq=3",
        "--eval.n_episodes=1", "--eval.batch_size=1"};
  };
  run(diffusion(full, 6));
  run(diffusion(part, 3));
  run({"--resume=true", "--config_path=" + (part / "checkpoints/last/pretrained_model").string(), "--steps=6"});
  const fs::path a = full / "checkpoints/000006", b = part / "checkpoints/000006";
  ASSERT_TRUE(fs::exists(b / "pretrained_model/model.safetensors"));
  expect_same_tensors(a / "pretrained_model/model.safetensors", b / "pretrained_model/model.safetensors");
  expect_same_tensors(a / "training_state/rng_state.safetensors", b / "training_state/rng_state.safetensors");
  // Both runs evaluated (the comparison covers an evaluation between the checkpoint and step 4).
  size_t evals = 0;
  for (const Json& rec : jsonl(full / "train_metrics.jsonl"))
    if (rec.value("split", "") == "eval") ++evals;
  EXPECT_EQ(evals, 2u);
}

// --ema.enable (#18): the average is in the checkpoint (training_state/ema_state.pt, LeRobot's
// pretrained_model_ema/) and a resumed run continues it bit-identically.
TEST(Trainer, EmaIsCheckpointedAndResumesBitIdentically) {
  const fs::path full = scratch() / "ema_full", part = scratch() / "ema_part";
  const std::vector<std::string> ema = {"--save_freq=3", "--ema.enable=true", "--ema.power=0.5"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), ema.begin(), ema.end());
    return a;
  };
  run(with(tiny_run(full, 6)));
  run(with(tiny_run(part, 3)));
  run(with({"--resume=true", "--config_path=" + (part / "checkpoints/last/pretrained_model").string(), "--steps=6"}));
  const fs::path a = full / "checkpoints/000006", b = part / "checkpoints/000006";
  ASSERT_TRUE(fs::exists(b / "training_state/ema_state.pt"));
  for (const char* f : {"config.json", "model.safetensors", "train_config.json", "policy_preprocessor.json"})
    EXPECT_TRUE(fs::exists(b / "pretrained_model_ema" / f)) << f;
  expect_same_tensors(a / "pretrained_model_ema/model.safetensors", b / "pretrained_model_ema/model.safetensors");
  expect_same_tensors(a / "pretrained_model/model.safetensors", b / "pretrained_model/model.safetensors");
  EXPECT_EQ(read_file(a / "training_state/ema_state.pt").substr(0, 2), "PK");  // torch.save's zip container
  // The average differs from the live weights and from a restart of the average at step 3.
  const TensorMap live = load_safetensors(a / "pretrained_model/model.safetensors");
  const TensorMap avg = load_safetensors(a / "pretrained_model_ema/model.safetensors");
  const TensorMap avg3 = load_safetensors(full / "checkpoints/000003/pretrained_model_ema/model.safetensors");
  EXPECT_FALSE(torch::equal(live.at("model.action_head.weight"), avg.at("model.action_head.weight")));
  EXPECT_FALSE(torch::equal(avg3.at("model.action_head.weight"), avg.at("model.action_head.weight")));
}

// The data position and the optimizer steps of a checkpoint depend on its accumulation steps: a resume
// with others is refused naming the flag, before any step.
TEST(Trainer, RefusesToResumeWithOtherAccumulationSteps) {
  const fs::path out = scratch() / "accum";
  run(tiny_run(out, 2, {"--save_freq=2"}));
  try {
    run({"--resume=true", "--config_path=" + (out / "checkpoints/last/pretrained_model").string(), "--steps=4",
         "--accelerator.gradient_accumulation.steps=2"});
    FAIL() << "resumed with other accumulation steps";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    EXPECT_NE(std::string(e.what()).find("--accelerator.gradient_accumulation.steps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("set it to 1"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out / "checkpoints/000004"));
}

TEST(Trainer, RefusesToOverwriteAnExistingOutputDir) {
  const fs::path out = scratch() / "exists";
  fs::create_directories(out / "something");
  try {
    run(tiny_run(out, 1));
    FAIL() << "overwrote an existing output dir";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
}

TEST(Trainer, TensorBoardAndJsonlHoldTheLoggedLosses) {
  const fs::path out = scratch() / "tb";
  run(tiny_run(out, 4));
  const auto lines = jsonl(out / "train_metrics.jsonl");
  ASSERT_EQ(lines.size(), 2u);  // log_freq 2
  fs::path events;
  for (const auto& e : fs::directory_iterator(out / "tensorboard")) events = e.path();
  ASSERT_FALSE(events.empty());
  const TensorBoardEvents tb = read_tensorboard_events(events);  // throws on any bad CRC
  EXPECT_EQ(tb.file_version, "brain.Event:2");
  std::vector<std::pair<int64_t, double>> losses;
  for (const auto& s : tb.scalars)
    if (s.tag == "train/loss") losses.emplace_back(s.step, s.value);
  ASSERT_EQ(losses.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(losses[i].first, lines[i]["step"].get<int64_t>());
    EXPECT_NEAR(losses[i].second, lines[i]["loss"].get<double>(), 1e-4 * std::abs(losses[i].second));
  }
}

double mean_loss(const std::vector<Json>& lines, size_t begin, size_t end) {
  double s = 0;
  for (size_t i = begin; i < end; ++i) s += lines[i]["loss"].get<double>();
  return s / static_cast<double>(end - begin);
}

TEST(Trainer, Bf16TrainsAndLossFalls) {
  const fs::path out = scratch() / "bf16";
  run(tiny_run(out, 24, {"--accelerator.mixed_precision=bf16", "--policy.optimizer_lr=1e-3", "--log_freq=4",
                         "--save_checkpoint=false"}));
  const auto lines = jsonl(out / "train_metrics.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_LT(mean_loss(lines, 4, 6), 0.7 * mean_loss(lines, 0, 2));
}

TEST(Trainer, Fp16SkipsOverflowingStepsWithoutDiverging) {
  const fs::path out = scratch() / "fp16";
  // A loss scale of 1e38 overflows for sure; the scaler must back off, skip those steps, then train.
  run(tiny_run(out, 24, {"--accelerator.mixed_precision=fp16", "--accelerator.loss_scale_init=1e38",
                         "--policy.optimizer_lr=1e-3", "--log_freq=4", "--save_checkpoint=false"}));
  const auto lines = jsonl(out / "train_metrics.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  const int64_t skipped = lines.back()["skipped_steps"].get<int64_t>();
  EXPECT_GE(skipped, 2);
  EXPECT_LE(skipped, 16);
  for (const auto& l : lines) EXPECT_TRUE(std::isfinite(l["loss"].get<double>()));
  EXPECT_LT(mean_loss(lines, 4, 6), 0.7 * mean_loss(lines, 0, 2));
}

// The fused optimizer skips a non-finite step on the device (no host read per step); the count of
// skipped steps in a row is read at log steps and stops the run the same way.
TEST(Trainer, NonFiniteStepsSkippedOnTheDeviceStopTheRunToo) {
  if (!fused_adam_available(c10::Device(c10::kCPU)))
    GTEST_SKIP() << "this LibTorch has no fused Adam kernels for the CPU (2.4+): the device-side skip runs on CUDA";
  const fs::path out = scratch() / "nan_fused";
  try {
    run(tiny_run(out, 40, {"--policy.optimizer_lr=1e30", "--policy.optimizer_lr_backbone=1e30",
                           "--max_nonfinite_steps=2", "--save_checkpoint=false", "--optimizer_impl=fused"}));
    FAIL() << "a diverged run did not stop";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NaN/Inf"), std::string::npos) << e.what();
  }
}

TEST(Trainer, NonFiniteLossStopsNamingTheStep) {
  const fs::path out = scratch() / "nan";
  try {
    // A learning rate of 1e30 blows the weights up within a few steps.
    run(tiny_run(out, 40, {"--policy.optimizer_lr=1e30", "--policy.optimizer_lr_backbone=1e30",
                           "--max_nonfinite_steps=2", "--save_checkpoint=false"}));
    FAIL() << "a diverged run did not stop";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("NaN/Inf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("step "), std::string::npos) << msg;
  }
}

using testing::run_cli;  // tests/support/run_command.h

TEST(TrainCli, TypoInAFlagFailsBeforeAnyWork) {
  const fs::path out = scratch() / "typo";
  std::string text;
  const int rc = run_cli("train --policy.type=act --dataset.root=" + dataset().string() +
                             " --bach_size=3 --output_dir=" + out.string(),
                         &text);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("--bach_size"), std::string::npos) << text;
  EXPECT_NE(text.find("--batch_size"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out));
}

// estimate: the step count follows from the dataset, epochs and layout; the timing comes from
// a real measured run (so it is positive), after a warm-up past the first epoch's smaller last
// batch when it comes early, and nothing is left behind in the output dir.
TEST(TrainCli, EstimateCountsStepsFromDatasetEpochsAndLayout) {
  const DatasetMetadata meta = load_dataset_metadata(dataset());
  const std::string flags =
      testing::flags_without(tiny_run(scratch() / "unused_estimate_out", 1), {"steps", "output_dir", "log_freq"});
  std::string text;
  const int rc = run_cli("estimate" + flags + " --num_gpus=3 --epochs=2.5 --measure_steps=2 "
                         "--accelerator.gradient_accumulation.steps=2", &text);
  ASSERT_EQ(rc, 0) << text;
  const double samples = 2.5 * static_cast<double>(meta.total_frames);
  const auto loop_steps = static_cast<long long>(std::ceil(samples / (4 * 3)));
  const auto updates = static_cast<long long>(std::ceil(samples / (4 * 3 * 2)));
  EXPECT_NE(text.find("dataset: " + std::to_string(meta.total_frames) + " frames"), std::string::npos) << text;
  EXPECT_NE(text.find("batch 4 x 3 process(es) x accumulation 2 = 24 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("steps: --steps=" + std::to_string(loop_steps) + " (loop steps per process; " +
                      std::to_string(updates) + " optimizer updates)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("measured here (cpu, 2 steps after 2 warm-up)"), std::string::npos) << text;
  const auto at = text.find(" s/step");
  ASSERT_NE(at, std::string::npos) << text;
  const auto start = text.rfind(": ", at) + 2;
  EXPECT_GT(std::stod(text.substr(start, at - start)), 0.0) << text;
  EXPECT_FALSE(fs::exists(scratch() / "unused_estimate_out"));

  // The first epoch ends on a smaller batch within the first 2K steps: the warm-up runs past it
  // (its new shape costs a one-off: on CUDA an eager step and cuDNN's kernel search), and stays a
  // multiple of K so that the timed window is the last log window.
  const int64_t frames = meta.total_frames;
  int64_t batch = 4;
  while (frames % batch == 0) ++batch;
  const int64_t epoch_steps = (frames + batch - 1) / batch;
  const int64_t k = (epoch_steps + 1) / 2;
  const std::string short_flags = testing::flags_without(tiny_run(scratch() / "unused_estimate_out", 1),
                                                         {"steps", "output_dir", "log_freq", "batch_size"});
  std::string epoch_text;
  ASSERT_EQ(run_cli("estimate" + short_flags + " --batch_size=" + std::to_string(batch) +
                        " --measure_steps=" + std::to_string(k),
                    &epoch_text),
            0)
      << epoch_text;
  const std::string head = "measured here (cpu, " + std::to_string(k) + " steps after ";
  const auto w_at = epoch_text.find(head);
  ASSERT_NE(w_at, std::string::npos) << epoch_text;
  const int64_t warmup = std::stoll(epoch_text.substr(w_at + head.size()));
  EXPECT_GE(warmup, epoch_steps) << epoch_text;
  EXPECT_LT(warmup, epoch_steps + k) << epoch_text;
  EXPECT_EQ(warmup % k, 0) << epoch_text;

  std::string bad;
  EXPECT_EQ(run_cli("estimate" + flags + " --num_gpus=zero", &bad), 2) << bad;
  EXPECT_NE(bad.find("--num_gpus"), std::string::npos) << bad;
}

// infer: a checkpoint and an observation file in, the policy's action chunk out (what
// scripts/check_python_lerobot.py compares with Python LeRobot); a missing input is named.
TEST(TrainCli, InferWritesThePolicysActionChunkAndNamesAMissingInput) {
  const fs::path out = scratch() / "infer_run";
  run(tiny_run(out, 2));
  const fs::path model = out / "checkpoints" / "last" / "pretrained_model";
  torch::manual_seed(11);
  TensorMap obs = {{"observation.image", torch::randint(0, 256, {64, 64, 3}).to(torch::kUInt8)},  // HWC
                   {"observation.state", torch::randn({2})}};
  const fs::path obs_file = scratch() / "infer_obs.safetensors", act_file = scratch() / "infer_act.safetensors";
  save_safetensors(obs_file, obs);
  std::string text;
  ASSERT_EQ(run_cli("infer --policy.path=" + model.string() + " --observation=" + obs_file.string() +
                        " --output=" + act_file.string(), &text), 0) << text;
  const torch::Tensor got = load_safetensors(act_file).at("action");
  InferencePolicy policy(model);
  const torch::Tensor want = policy.predict_action_chunk({obs.begin(), obs.end()});
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_EQ(got.size(0), 5);  // chunk_size
  EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6)) << (got - want).abs().max();
  EXPECT_NE(text.find("action chunk 5 x 2"), std::string::npos) << text;

  obs.erase("observation.state");
  save_safetensors(obs_file, obs);
  std::string bad;
  EXPECT_EQ(run_cli("infer --policy.path=" + model.string() + " --observation=" + obs_file.string(), &bad), 3) << bad;
  EXPECT_NE(bad.find("observation.state"), std::string::npos) << bad;
  EXPECT_NE(bad.find(obs_file.string()), std::string::npos) << bad;
}

TEST(TrainCli, SigkillDuringCheckpointKeepsLastAndResumeWorks) {
  const fs::path out = scratch() / "killed";
  std::string args;
  for (const auto& a : tiny_run(out, 4, {"--save_freq=2", "--num_workers=0"})) args += " " + a;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("LEROBOT_FAULT_PAUSE_CHECKPOINT_STEP", "4", 1);
    const std::string cmd = std::string(LEROBOT_CLI) + " train" + args + " > /dev/null 2>&1";
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
    ::_exit(127);
  }
  // Wait until the step-4 checkpoint is half written (its model is in the temporary dir).
  const fs::path root = out / "checkpoints";
  bool half = false;
  for (int i = 0; i < 3000 && !half; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(root))
      for (const auto& e : fs::directory_iterator(root))
        half |= e.path().filename().string().rfind(".tmp-000004", 0) == 0 &&
                fs::exists(e.path() / "pretrained_model/model.safetensors");
  }
  ASSERT_TRUE(half) << "the run never reached the step-4 checkpoint";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_FALSE(fs::exists(root / "000004"));
  EXPECT_EQ(fs::read_symlink(root / "last"), fs::path("000002"));
  // The step-4 record was logged before the kill (log_freq=2), and a crash can tear a line.
  const fs::path metrics = out / "train_metrics.jsonl";
  ASSERT_EQ(jsonl(metrics).back()["step"], 4);
  { std::ofstream(metrics, std::ios::app) << "{\"split\":\"tra"; }
  // Resume from `last` finishes the run, logging steps 3-4 again: the file keeps one record a step.
  run({"--resume=true", "--config_path=" + (root / "last/pretrained_model").string()});
  EXPECT_TRUE(fs::exists(root / "000004/training_state/training_step.json"));
  EXPECT_EQ(fs::read_symlink(root / "last"), fs::path("000004"));
  std::vector<int64_t> steps;
  for (const auto& r : jsonl(metrics)) steps.push_back(r["step"].get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 4}));
}

}  // namespace
}  // namespace lerobot
