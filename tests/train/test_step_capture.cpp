// Whole-step CUDA graphs (--cuda.graphs): when a run is captured and why not, the static input
// buffers, and, on CPU, the graph path's bookkeeping run eagerly: 50 steps through the static
// buffers give the same losses as the plain step. The capture itself needs a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/common/device_graph.h"
#include "lerobot/common/op_counter.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/policies/act/attention.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/step_capture.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_setup.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

StepCaptureFacts capturable() {
  StepCaptureFacts f;
  f.enabled = true;
  f.graphs_available = true;
  f.device = "cuda:0";
  f.skips_on_device = true;
  return f;
}

TEST(StepCapturePlan, CapturedOnlyWhereSafeAndOtherwiseSaysWhy) {
  EXPECT_TRUE(plan_step_capture(capturable()).capture);
  EXPECT_EQ(plan_step_capture(capturable()).why_not, "");
  struct Case {
    std::function<void(StepCaptureFacts&)> change;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](StepCaptureFacts& f) { f.enabled = false; }, "--cuda.graphs=false"},
      {[](StepCaptureFacts& f) { f.graphs_available = false, f.device = "cpu"; }, "on cpu"},
      {[](StepCaptureFacts& f) { f.world_size = 2; }, "2 processes"},
      {[](StepCaptureFacts& f) { f.accumulation_steps = 4; }, "gradient_accumulation.steps=4"},
      {[](StepCaptureFacts& f) { f.fp16_loss_scaling = true; }, "fp16 loss scaling"},
      {[](StepCaptureFacts& f) { f.skips_on_device = false; }, "fused Adam/AdamW"},
      {[](StepCaptureFacts& f) { f.lr_schedule = true; }, "learning-rate schedule"},
  };
  for (const auto& c : cases) {
    StepCaptureFacts f = capturable();
    c.change(f);
    const StepCapturePlan plan = plan_step_capture(f);
    EXPECT_FALSE(plan.capture) << c.says;
    EXPECT_NE(plan.why_not.find(c.says), std::string::npos) << plan.why_not;
  }
}

TEST(StepCapturePlan, ACpuRunIsNotCapturedAndTheFactsSayWhy) {
  auto setup = make_train_setup(
      parse_train_config(testing::tiny_act_run(testing::train_scratch() / "capture_facts", 2,
                                               {"--batch_size=2", "--policy.device=cpu"})),
      LaunchEnv{}, std::nullopt);
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  const StepCaptureFacts f = step_capture_facts(parts, update, true, setup->world_size());
  EXPECT_FALSE(f.graphs_available);
  EXPECT_FALSE(DeviceGraph::available(torch::Device(torch::kCPU)));
  EXPECT_EQ(f.world_size, 1);
  EXPECT_EQ(f.lr_schedule, parts.scheduler != nullptr);
  const StepCapturePlan plan = plan_step_capture(f);
  EXPECT_FALSE(plan.capture);
  EXPECT_NE(plan.why_not.find("cpu"), std::string::npos) << plan.why_not;
  EXPECT_THROW(DeviceGraph{torch::Device(torch::kCPU)}, Error);
}

TEST(StaticBatch, CopiesIntoTheSameBuffersAndNamesAShapeChange) {
  torch::manual_seed(0);
  const Batch first{{"action", torch::randn({2, 5, 3})}, {"observation.state", torch::randn({2, 3})}};
  StaticBatch s;
  EXPECT_FALSE(s.initialized());
  s.init(first);
  ASSERT_TRUE(s.initialized());
  const void* action_memory = s.buffers().at("action").data_ptr();
  EXPECT_NE(action_memory, first.at("action").data_ptr()) << "the buffers are the batch's own copies";
  EXPECT_TRUE(torch::equal(s.buffers().at("action"), first.at("action")));

  const Batch second{{"action", torch::randn({2, 5, 3})}, {"observation.state", torch::randn({2, 3})}};
  ASSERT_TRUE(s.matches(second));
  s.copy_from(second);
  EXPECT_EQ(s.buffers().at("action").data_ptr(), action_memory) << "a replay reads the same memory";
  EXPECT_TRUE(torch::equal(s.buffers().at("action"), second.at("action")));
  EXPECT_TRUE(torch::equal(s.buffers().at("observation.state"), second.at("observation.state")));

  std::string why;
  EXPECT_FALSE(s.matches({{"action", torch::randn({1, 5, 3})}, {"observation.state", torch::randn({1, 3})}}, &why));
  EXPECT_NE(why.find("'action' is [1, 5, 3] Float, captured [2, 5, 3] Float"), std::string::npos) << why;
  EXPECT_FALSE(s.matches({{"action", torch::randn({2, 5, 3}).to(torch::kDouble)},
                          {"observation.state", torch::randn({2, 3})}},
                         &why));
  EXPECT_NE(why.find("Double"), std::string::npos) << why;
  EXPECT_FALSE(s.matches({{"action", torch::randn({2, 5, 3})}}, &why));
  EXPECT_NE(why.find("1 keys, not 2"), std::string::npos) << why;
  EXPECT_FALSE(s.matches({{"action", torch::randn({2, 5, 3})}, {"observation.other", torch::randn({2, 3})}}, &why));
  EXPECT_NE(why.find("new key 'observation.other'"), std::string::npos) << why;
}

// Losses and final weights of `steps` updates: the plain step, or the graph path with its static
// input buffers (run eagerly: the bookkeeping of the captured step without the capture).
struct StepsRun {
  std::vector<double> losses;
  torch::Tensor last_param;
  bool replayed = false;  // the last step was a graph replay
};

// `args`: the whole command line of the run.
StepsRun run_steps_of(bool static_buffers, int steps, const std::vector<std::string>& args) {
  auto setup = make_train_setup(parse_train_config(args), LaunchEnv{}, std::nullopt);
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  CapturedUpdateStep captured(update, parts,
                              plan_step_capture(step_capture_facts(parts, update, setup->cfg.cuda.graphs, 1)));
  if (static_buffers) captured.use_static_buffers_without_capture();
  setup->policy->train();
  std::vector<torch::Tensor> device_losses;
  for (int step = 0; step < steps; ++step) {
    const DataBatch raw = setup->loader->next();
    const Batch batch = prepare_batch(raw.tensors, setup->processors, setup->device);
    // Read after all steps, as the logger's sums; a replay refills the same result tensor, so copy.
    device_losses.push_back(captured.run(batch, step).loss.detach().clone());
  }
  StepsRun r;
  for (const auto& l : device_losses) r.losses.push_back(l.item<double>());
  r.last_param = update.params().back().detach().to(torch::kCPU).clone();
  r.replayed = captured.replaying();
  return r;
}

// The tiny ACT run. The device is the suite's default (ctest's LEROBOT_CPP_DEFAULT_DEVICE=cpu)
// unless `extra` names one.
StepsRun run_steps(bool static_buffers, int steps, const std::string& name, std::vector<std::string> extra) {
  extra.push_back("--batch_size=2");
  return run_steps_of(static_buffers, steps, testing::tiny_act_run(testing::train_scratch() / name, steps, extra));
}

// LoRA adapters (#41, --peft.*) on a one-step tiny ACT checkpoint, as LeRobot needs target modules
// for ACT: its encoder layers' feed-forward Linears. `extra` as for run_steps.
std::vector<std::string> lora_act_run(const std::string& name, int steps, const std::vector<std::string>& extra) {
  static const std::string base = [] {
    const auto out = testing::train_scratch() / "capture_lora_base";
    testing::run_train(testing::tiny_act_run(out, 1, {}));
    return (out / "checkpoints/last/pretrained_model").string();
  }();
  std::vector<std::string> args = {"--policy.path=" + base,
                                   "--dataset.root=" + testing::reach2d_dataset().string(),
                                   "--peft.method_type=LORA",
                                   "--peft.r=4",
                                   "--peft.target_modules=[linear1,linear2]",
                                   "--batch_size=2",
                                   "--steps=" + std::to_string(steps),
                                   "--log_freq=1",
                                   "--num_workers=0",
                                   "--seed=7",
                                   "--output_dir=" + (testing::train_scratch() / name).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CapturedUpdateStep, FiftyStepsThroughTheStaticBuffersEqualThePlainSteps) {
  const StepsRun plain = run_steps(false, 50, "capture_plain", {});
  const StepsRun through_buffers = run_steps(true, 50, "capture_static", {});
  ASSERT_EQ(plain.losses.size(), 50u);
  ASSERT_EQ(through_buffers.losses.size(), 50u);
  for (size_t i = 0; i < plain.losses.size(); ++i)
    EXPECT_EQ(plain.losses[i], through_buffers.losses[i]) << "step " << i;
  EXPECT_TRUE(torch::equal(plain.last_param, through_buffers.last_param));
  // The batches differ from step to step, so a stale input buffer would show.
  EXPECT_NE(plain.losses.front(), plain.losses[1]);
}

// With LoRA adapters the capture plan is the plain run's (here only the CPU keeps it eager), and
// 20 steps through the static buffers equal the plain steps: the optimizer sees the adapters only,
// and they move.
TEST(CapturedUpdateStep, LoraAdaptersThroughTheStaticBuffersEqualThePlainSteps) {
  {
    auto setup = make_train_setup(parse_train_config(lora_act_run("capture_lora_plan", 1, {})), LaunchEnv{}, std::nullopt);
    ASSERT_TRUE(setup->peft.has_value());
    const UpdateStepParts parts = update_step_parts(*setup);
    UpdateStep update(parts);
    StepCaptureFacts facts = step_capture_facts(parts, update, true, 1);
    EXPECT_EQ(facts.policy_blocker, "") << "ACT with adapters has nothing the capture refuses";
    facts.graphs_available = true;  // what a CUDA build on a GPU reports
    facts.device = "cuda:0";
    facts.skips_on_device = true;   // the fused AdamW there
    EXPECT_TRUE(plan_step_capture(facts).capture) << plan_step_capture(facts).why_not;
    for (const auto& p : update.params()) EXPECT_TRUE(p.requires_grad());
    int64_t trainable = 0, total = 0;
    for (const auto& p : setup->policy->parameters()) {
      total += p.numel();
      if (p.requires_grad()) trainable += p.numel();
    }
    int64_t stepped = 0;
    for (const auto& p : update.params()) stepped += p.numel();
    EXPECT_EQ(stepped, trainable) << "the optimizer steps exactly the adapters";
    EXPECT_LT(trainable * 10, total);
  }
  const StepsRun plain = run_steps_of(false, 20, lora_act_run("capture_lora_plain", 20, {}));
  const StepsRun through_buffers = run_steps_of(true, 20, lora_act_run("capture_lora_static", 20, {}));
  ASSERT_EQ(plain.losses.size(), 20u);
  ASSERT_EQ(through_buffers.losses.size(), 20u);
  for (size_t i = 0; i < plain.losses.size(); ++i) EXPECT_EQ(plain.losses[i], through_buffers.losses[i]) << "step " << i;
  EXPECT_TRUE(torch::equal(plain.last_param, through_buffers.last_param));
  EXPECT_NE(plain.losses.front(), plain.losses.back()) << "the adapters train";
}

// A learning-rate schedule under capture: the fused kernels read the lr from a device tensor that
// the host refreshes before every step. Run eagerly through the static buffers, the device lr
// gives the host lr's losses and weights (the kernels round the lr to float32 either way).
const std::vector<std::string> kScheduledAdamW = {
    "--use_policy_training_preset=false", "--optimizer.type=adamw",        "--optimizer.lr=0.001",
    "--scheduler.type=cosine_decay_with_warmup",                              "--scheduler.num_warmup_steps=3",
    "--scheduler.num_decay_steps=12",    "--scheduler.peak_lr=0.001",      "--scheduler.decay_lr=0.00001"};

TEST(CapturedUpdateStep, AScheduledLrReadFromTheDeviceEqualsTheHostLr) {
  if (!fused_adam_available(torch::Device(torch::kCPU)))
    GTEST_SKIP() << "this LibTorch has no fused Adam kernels for the CPU (2.4+): the device lr runs on CUDA";
  std::vector<std::string> flags = kScheduledAdamW;
  flags.push_back("--optimizer_impl=fused");
  const StepsRun host_lr = run_steps(false, 12, "capture_lr_host", flags);
  const StepsRun device_lr = run_steps(true, 12, "capture_lr_device", flags);
  ASSERT_EQ(host_lr.losses.size(), device_lr.losses.size());
  for (size_t i = 0; i < host_lr.losses.size(); ++i)
    EXPECT_NEAR(device_lr.losses[i], host_lr.losses[i], 1e-5 * std::max(1.0, std::abs(host_lr.losses[i]))) << i;
  EXPECT_LT((device_lr.last_param - host_lr.last_param).abs().max().item<double>(), 1e-6);
  // A frozen lr (the warm-up's first value) would train far less.
  std::vector<std::string> frozen = flags;
  frozen.push_back("--scheduler.num_warmup_steps=100000");
  const StepsRun slow = run_steps(false, 12, "capture_lr_frozen", frozen);
  EXPECT_GT((slow.last_param - host_lr.last_param).abs().max().item<double>(), 1e-5);
}

// On a GPU: the captured graph replays the steps the eager path runs. Same seed, same batches,
// TF32 and cuDNN's algorithm search off and cuDNN's deterministic algorithms on, so both runs use
// the same kernels and the convolutions' backward adds in a fixed order (without it the plain run
// drifted to 4e-3 at step 11, H200 2026-11-27); lr 1e-3 so every step
// moves the weights visibly (a replay that skipped the optimizer or reused stale inputs would
// show in the later losses). `steps` 12 unless said. The attention is the composite one: the
// fused kernel's CUDA backward accumulates with atomics, so two runs of it differ in the last
// bits, and lr 1e-3 grows that past 1e-4 within a few steps (H200, 2026-11-26: from step 6).
// `lora`: the run is lora_act_run's (adapters on the tiny ACT checkpoint) instead of the tiny ACT.
void expect_replays_equal_eager(const std::vector<std::string>& policy_flags, const std::string& name,
                                AttentionKernel kernel = AttentionKernel::kComposite, int steps = 12, bool lora = false) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (none here): the capture runs on a GPU only";
  if (!DeviceGraph::available(torch::Device(torch::kCUDA, 0)))
    GTEST_SKIP() << "this build has no CUDA graphs (a CPU LibTorch, 1.x, or LEROBOT_CUDA_GRAPHS=OFF)";
  AttentionKernelScope attention(kernel);
  std::vector<std::string> flags = {"--policy.device=cuda", "--cuda.tf32=false", "--cuda.cudnn_benchmark=false",
                                    "--cudnn_deterministic=true",      "--policy.optimizer_lr=1e-3", "--policy.optimizer_lr_backbone=1e-3"};
  flags.insert(flags.end(), policy_flags.begin(), policy_flags.end());
  std::vector<std::string> eager_flags = flags;
  eager_flags.push_back("--cuda.graphs=false");
  auto run = [&](const std::string& run_name, const std::vector<std::string>& f) {
    return lora ? run_steps_of(false, steps, lora_act_run(run_name, steps, f)) : run_steps(false, steps, run_name, f);
  };
  const StepsRun eager = run(name + "_eager", eager_flags);
  const StepsRun graphed = run(name + "_graph", flags);
  ASSERT_FALSE(eager.replayed);
  ASSERT_TRUE(graphed.replayed) << "the run was not captured (see the log for why)";
  ASSERT_EQ(graphed.losses.size(), eager.losses.size());
  for (int i = 0; i < steps; ++i)
    EXPECT_NEAR(graphed.losses[i], eager.losses[i], 1e-4 * std::max(1.0, std::abs(eager.losses[i]))) << "step " << i;
  EXPECT_NE(eager.losses[steps - 1], eager.losses[steps - 2]) << "the batches and weights change every step";
  const double diff = (graphed.last_param - eager.last_param).abs().max().item<double>();
  EXPECT_LT(diff, 1e-4) << "weights after " << steps << " steps";
}

TEST(CapturedUpdateStep, OnCudaTheReplaysEqualTheEagerStepsWithoutRandomness) {
  expect_replays_equal_eager({"--policy.dropout=0", "--policy.use_vae=false"}, "cuda_capture_plain");
}

// LoRA adapters on ACT (#41): the captured step replays the eager steps, the optimizer stepping
// only the adapters.
TEST(CapturedUpdateStep, OnCudaLoraAdaptersReplayTheEagerSteps) {
  expect_replays_equal_eager({"--policy.dropout=0"}, "cuda_capture_lora",
                             AttentionKernel::kComposite, 12, /*lora=*/true);
}

// Dropout and the VAE's sample draw from the CUDA generator inside the graph: each replay gets the
// numbers the eager step at that position gets (PyTorch's graph-safe Philox offsets).
TEST(CapturedUpdateStep, OnCudaTheReplaysDrawTheEagerStepsRandomNumbers) {
  expect_replays_equal_eager({}, "cuda_capture_random");
}

// The fused attention (the default on LibTorch 2.x; dropout drawn inside its kernel) is captured,
// and its first replays (steps 3 and 4) give the eager steps' losses: before its atomics'
// last-bit differences have grown (see above).
TEST(CapturedUpdateStep, OnCudaTheFusedAttentionsFirstReplaysEqualTheEagerSteps) {
  if (!compat::kHasFusedAttention) GTEST_SKIP() << "LibTorch " TORCH_VERSION " has no fused attention";
  expect_replays_equal_eager({}, "cuda_capture_fused", AttentionKernel::kFused, 5);
}

// A cosine schedule with warm-up: captured once, replayed with the lr the host scheduler sets.
TEST(CapturedUpdateStep, OnCudaAScheduledLrIsFollowedByTheReplays) {
  if (!fused_adam_tensor_lr_available(torch::Device(torch::kCUDA, 0)))
    GTEST_SKIP() << "this LibTorch has no tensor-lr fused kernels (2.4+)";
  std::vector<std::string> flags = kScheduledAdamW;
  flags.insert(flags.end(), {"--policy.dropout=0", "--policy.use_vae=false"});
  expect_replays_equal_eager(flags, "cuda_capture_schedule");
}

// Diffusion with LeRobot's older default crop (84 of 96 there; 56 of the 64-pixel test images),
// random in training: a small U-Net, one step per call.
std::unique_ptr<TrainSetup> random_crop_diffusion(const std::string& name, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--policy.type=diffusion", "--dataset.root=" + testing::reach2d_dataset().string(),
                                   "--policy.down_dims=[16,32]", "--policy.horizon=8", "--policy.n_action_steps=4",
                                   "--policy.crop_shape=[56,56]", "--policy.crop_is_random=true",
                                   "--policy.pretrained_backbone_weights=null", "--batch_size=2", "--steps=20",
                                   "--num_workers=0", "--seed=7",
                                   "--output_dir=" + (testing::train_scratch() / name).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return make_train_setup(parse_train_config(args), LaunchEnv{}, std::nullopt);
}

// A random crop used to keep Diffusion's step out of a graph (its offsets were read on the host).
// The graph path now switches the policy to offsets drawn on the device: no host read in the
// forward, so nothing stands in the way of capture; eagerly the crop stays LeRobot's.
TEST(CapturedUpdateStep, TheGraphPathDrawsDiffusionsRandomCropOnTheDevice) {
  auto setup = random_crop_diffusion("capture_crop", {});
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  const StepCaptureFacts f = step_capture_facts(parts, update, true, 1);
  EXPECT_EQ(f.policy_blocker, "");
  CapturedUpdateStep captured(update, parts, plan_step_capture(f));  // not captured: a CPU run
  setup->policy->train();
  const Batch batch = prepare_batch(setup->loader->next().tensors, setup->processors, setup->device);
  auto forward_syncs = [&] {
    OpCounter counter;
    (void)setup->policy->forward(batch);
    return counter.syncs();
  };
  EXPECT_EQ(forward_syncs(), 2) << "eager: torchvision's offsets, read back";
  captured.use_static_buffers_without_capture();
  EXPECT_EQ(forward_syncs(), 0) << "the graph path: offsets drawn on the device";
  for (int step = 0; step < 3; ++step)
    EXPECT_TRUE(std::isfinite(captured.run(batch, step).loss.item<double>())) << "step " << step;
}

// On a GPU: such a run is captured and its replays train (new crops each replay, so the losses
// are not the eager run's; they stay finite and the weights move).
TEST(CapturedUpdateStep, OnCudaDiffusionWithARandomCropIsCapturedAndReplayed) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (none here): the capture runs on a GPU only";
  if (!DeviceGraph::available(torch::Device(torch::kCUDA, 0)))
    GTEST_SKIP() << "this build has no CUDA graphs (a CPU LibTorch, 1.x, or LEROBOT_CUDA_GRAPHS=OFF)";
  auto setup = random_crop_diffusion("cuda_capture_crop", {"--policy.device=cuda"});
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  const StepCapturePlan plan = plan_step_capture(step_capture_facts(parts, update, true, 1));
  ASSERT_TRUE(plan.capture) << plan.why_not;
  CapturedUpdateStep captured(update, parts, plan);
  setup->policy->train();
  const torch::Tensor before = update.params().back().detach().clone();
  std::vector<torch::Tensor> losses;
  for (int step = 0; step < 8; ++step) {
    const Batch batch = prepare_batch(setup->loader->next().tensors, setup->processors, setup->device);
    losses.push_back(captured.run(batch, step).loss.detach().clone());
  }
  EXPECT_TRUE(captured.replaying());
  for (const auto& l : losses) EXPECT_TRUE(std::isfinite(l.item<double>()));
  EXPECT_GT((update.params().back().detach() - before).abs().max().item<double>(), 0.0);
}

}  // namespace
}  // namespace lerobot
