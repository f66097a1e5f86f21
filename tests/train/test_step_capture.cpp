// Whole-step CUDA graphs (--cuda.graphs): when a run is captured and why not, the static input
// buffers, and, on CPU, the graph path's bookkeeping run eagerly: 50 steps through the static
// buffers give the same losses as the plain step. The capture itself needs a GPU.
#include <gtest/gtest.h>

#include "lerobot/common/device_graph.h"
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
      parse_train_config(testing::tiny_act_run(testing::train_scratch() / "capture_facts", 2, {"--batch_size=2"})),
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
std::vector<double> losses_of(bool static_buffers, int steps, const std::string& name, torch::Tensor* last_param) {
  auto setup = make_train_setup(
      parse_train_config(testing::tiny_act_run(testing::train_scratch() / name, steps, {"--batch_size=2"})),
      LaunchEnv{}, std::nullopt);
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  CapturedUpdateStep captured(update, parts, plan_step_capture(step_capture_facts(parts, update, true, 1)));
  if (static_buffers) captured.use_static_buffers_without_capture();
  setup->policy->train();
  std::vector<torch::Tensor> device_losses;
  for (int step = 0; step < steps; ++step) {
    const DataBatch raw = setup->loader->next();
    const Batch batch = prepare_batch(raw.tensors, setup->processors, setup->device);
    device_losses.push_back(captured.run(batch, step).loss);  // read after all steps, as the logger's sums
  }
  std::vector<double> losses;
  for (const auto& l : device_losses) losses.push_back(l.item<double>());
  *last_param = update.params().back().detach().clone();
  return losses;
}

TEST(CapturedUpdateStep, FiftyStepsThroughTheStaticBuffersEqualThePlainSteps) {
  torch::Tensor plain_w, static_w;
  const auto plain = losses_of(false, 50, "capture_plain", &plain_w);
  const auto through_buffers = losses_of(true, 50, "capture_static", &static_w);
  ASSERT_EQ(plain.size(), 50u);
  ASSERT_EQ(through_buffers.size(), 50u);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(plain[i], through_buffers[i]) << "step " << i;
  EXPECT_TRUE(torch::equal(plain_w, static_w));
  // The batches differ from step to step, so a stale input buffer would show.
  EXPECT_NE(plain.front(), plain[1]);
}

}  // namespace
}  // namespace lerobot
