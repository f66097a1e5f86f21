// --cuda.channels_last: the convolution weights are re-laid in NHWC before the optimizer is
// built, keep that layout through training (gradients and optimizer state follow it), and the run
// computes what the NCHW run computes: the same losses and weights, the same checkpoint.
#include <gtest/gtest.h>

#include <iostream>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/policies/memory_format.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_setup.h"
#include "lerobot/train/update_step.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

struct LayoutRun {
  std::vector<double> losses;
  TensorMap initial, weights;
  bool channels_last = false;
  fs::path saved;
};

LayoutRun train_steps(const std::string& name, std::vector<std::string> extra, int steps = 6) {
  extra.push_back("--batch_size=2");
  const fs::path out = testing::train_scratch() / name;
  auto setup = make_train_setup(parse_train_config(testing::tiny_act_run(out, steps, extra)), LaunchEnv{}, std::nullopt);
  const UpdateStepParts parts = update_step_parts(*setup);
  UpdateStep update(parts);
  setup->policy->train();
  LayoutRun r;
  for (const auto& [k, v] : setup->policy->state_dict()) r.initial[k] = v.detach().clone().contiguous();
  for (int step = 0; step < steps; ++step) {
    const Batch batch = prepare_batch(setup->loader->next().tensors, setup->processors, setup->device);
    r.losses.push_back(update.run(batch, step).loss.item<double>());
  }
  r.channels_last = is_channels_last(*setup->policy);
  for (const auto& [k, v] : setup->policy->state_dict()) r.weights[k] = v.detach().clone();
  r.saved = out / "saved";
  save_pretrained(*setup->policy, r.saved);
  return r;
}

// Largest difference between the two runs' weights, and whether the run had 4-D weights at all.
double max_weight_difference(const LayoutRun& a, const LayoutRun& b) {
  double worst = 0;
  for (const auto& [k, v] : a.weights) worst = std::max(worst, (b.weights.at(k) - v).abs().max().item<double>());
  return worst;
}

// The largest difference between the two runs' weights as a share of how far training moved that
// tensor in run `a`, over the tensors training moved.
double weight_difference_per_update(const LayoutRun& a, const LayoutRun& b) {
  double worst = 0;
  for (const auto& [k, v] : a.weights) {
    const double moved = (v - a.initial.at(k)).abs().max().item<double>();
    if (moved == 0) continue;
    worst = std::max(worst, (b.weights.at(k) - v).abs().max().item<double>() / moved);
  }
  return worst;
}

TEST(ChannelsLast, TrainsAsTheDefaultLayoutDoesAndWritesTheSameCheckpoint) {
  // ACT's preset (AdamW, foreach): the layout survives the optimizer's updates.
  const LayoutRun nchw = train_steps("channels_first", {});
  const LayoutRun nhwc = train_steps("channels_last", {"--cuda.channels_last=true"});
  EXPECT_FALSE(nchw.channels_last);
  EXPECT_TRUE(nhwc.channels_last) << "the optimizer's updates kept the weights in NHWC";
  ASSERT_EQ(nchw.losses.size(), nhwc.losses.size());
  for (size_t i = 0; i < nchw.losses.size(); ++i)
    EXPECT_NEAR(nhwc.losses[i], nchw.losses[i], 1e-5 * std::abs(nchw.losses[i]) + 1e-6) << "step " << i;
  // Adam turns the convolutions' rounding differences in near-zero gradients into lr-sized steps
  // (lr 1e-5 here), so its weights agree to a few lr; SGD's below agree to rounding.
  EXPECT_LT(max_weight_difference(nchw, nhwc), 1e-4);
  // The checkpoint is written in the standard layout: the same keys and shapes, row-major bytes
  // that read back to the run's own weights.
  const TensorMap a = load_safetensors(nchw.saved / "model.safetensors");
  const TensorMap b = load_safetensors(nhwc.saved / "model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  int64_t four_d = 0;
  for (const auto& [k, v] : a) {
    ASSERT_TRUE(b.count(k)) << k;
    EXPECT_EQ(b.at(k).sizes(), v.sizes()) << k;
    EXPECT_TRUE(torch::equal(b.at(k), nhwc.weights.at(k))) << k;
    four_d += v.dim() == 4;
  }
  EXPECT_GT(four_d, 0) << "the tiny ACT has convolutions";

  // Plain SGD, one step from the same weights: the update is the gradient itself, so the two
  // layouts' updates differ only by the rounding of the convolutions' gradients. Over several steps
  // that rounding compounds, and by how much depends on the CPU's kernels (six steps: 1e-7 of a
  // weight on one machine, 1.2e-5 where oneDNN runs AVX-512 kernels); one step measures it alone
  // (1.5e-8 there, 1e-3 of the update). A wrong layout would be of the order of the update itself.
  const std::vector<std::string> sgd = {"--use_policy_training_preset=false", "--optimizer.type=sgd",
                                        "--optimizer.lr=1e-2", "--scheduler=null"};
  std::vector<std::string> sgd_nhwc = sgd;
  sgd_nhwc.push_back("--cuda.channels_last=true");
  const LayoutRun sgd_a = train_steps("channels_first_sgd", sgd, 1), sgd_b = train_steps("channels_last_sgd", sgd_nhwc, 1);
  EXPECT_TRUE(sgd_b.channels_last);
  const double per_update = weight_difference_per_update(sgd_a, sgd_b);
  std::cout << "SGD: largest weight difference " << max_weight_difference(sgd_a, sgd_b) << ", "
            << per_update << " of its tensor's update\n";
  EXPECT_LT(per_update, 1e-2);
  EXPECT_LT(max_weight_difference(sgd_a, sgd_b), 1e-6);
}

// The default (null) is NHWC exactly where it was timed faster: bf16 training on CUDA. A value
// given on the command line wins everywhere.
TEST(ChannelsLast, DefaultIsOnForBf16TrainingOnCudaOnly) {
  CudaConfig c;
  EXPECT_FALSE(c.channels_last.has_value());
  EXPECT_TRUE(c.channels_last_enabled(true, "bf16"));
  EXPECT_FALSE(c.channels_last_enabled(true, "no"));
  EXPECT_FALSE(c.channels_last_enabled(true, "fp16"));
  EXPECT_FALSE(c.channels_last_enabled(false, "bf16"));
  c.channels_last = false;
  EXPECT_FALSE(c.channels_last_enabled(true, "bf16"));
  c.channels_last = true;
  EXPECT_TRUE(c.channels_last_enabled(false, "no"));
}

TEST(ChannelsLast, ConvertsEveryFourDimensionalParameterInPlace) {
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3)), torch::nn::ReLU(),
                            torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 4, 1)), torch::nn::Flatten(),
                            torch::nn::Linear(4 * 6 * 6, 2));
  const torch::Tensor x = torch::randn({2, 3, 8, 8});
  const torch::Tensor before = net->forward(x);
  const void* first_weight = net->parameters()[0].unsafeGetTensorImpl();
  EXPECT_FALSE(is_channels_last(*net));
  EXPECT_EQ(use_channels_last(*net), 2);
  EXPECT_TRUE(is_channels_last(*net));
  EXPECT_EQ(net->parameters()[0].unsafeGetTensorImpl(), first_weight) << "the same Parameter, new strides";
  EXPECT_LT((net->forward(x) - before).abs().max().item<double>(), 1e-5);
}

}  // namespace
}  // namespace lerobot
