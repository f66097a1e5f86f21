// ACT training behaviour: overfitting one batch, the masked L1 ignoring padded steps, the KL
// term, the action queue and temporal ensembling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "lerobot/common/op_counter.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/factory.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

using testing::random_act_batch;
using testing::small_act_config;

TEST(ACTTrain, OverfitsOneBatch) {
  torch::manual_seed(0);
  // One thread: on a loaded CI machine OpenMP spinning across busy cores costs more than it gains.
  torch::set_num_threads(1);
  auto cfg = small_act_config(1, 32);
  cfg.dropout = 0.0;
  auto policy = make_policy(cfg);
  policy->train();
  auto batch = random_act_batch(cfg, 4, 11);
  torch::optim::AdamW opt(policy->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(1e-4));
  // The total loss starts dominated by 10 x KL, which falls within ~20 steps; also require the
  // L1 term to fall by a quarter so the test shows the actions themselves are being fitted (how
  // fast L1 falls further varies with thread count: 10% of start took 190 steps in one run).
  double first = -1, last = -1, first_l1 = -1, last_l1 = -1;
  int steps = 0;
  for (; steps < 300; ++steps) {
    opt.zero_grad();
    auto out = policy->forward(batch);
    out.loss.backward();
    opt.step();
    last = out.loss.item<double>();
    last_l1 = out.values.at("l1_loss").item<double>();
    if (first < 0) {
      first = last;
      first_l1 = last_l1;
    }
    ASSERT_TRUE(std::isfinite(last));
    if (last < 0.05 * first && last_l1 < 0.75 * first_l1) break;
  }
  RecordProperty("steps", steps);
  std::printf("overfit: loss %.4f -> %.4f, l1 %.4f -> %.4f in %d steps\n", first, last, first_l1, last_l1, steps);
  EXPECT_LT(last, 0.05 * first) << "start " << first << " after " << steps << " steps";
  EXPECT_LT(last_l1, 0.75 * first_l1);
}

// What in the forward depends on no input (the cameras' 2-D position embedding, the frozen batch
// norms' scale and shift) is made by the first forward and reused: later forwards dispatch no sin
// or rsqrt, and give the same loss as the first.
TEST(ACTTrain, TheForwardsConstantPartsAreMadeOnce) {
  torch::manual_seed(0);
  auto cfg = small_act_config(2, 32);
  cfg.dropout = 0.0;
  cfg.use_vae = false;
  auto policy = make_policy(cfg);
  policy->train();
  const auto batch = random_act_batch(cfg, 2, 5);
  const auto count = [](const OpCounter& c, const char* name) {
    const auto it = c.by_name().find(name);
    return it == c.by_name().end() ? int64_t{0} : it->second;
  };
  double first_loss = 0;
  {
    OpCounter c;
    first_loss = policy->forward(batch).loss.item<double>();
    EXPECT_GT(count(c, "aten::sin"), 0) << "the first forward makes the position embedding";
    EXPECT_GT(count(c, "aten::rsqrt"), 0) << "the first forward makes the batch norms' scale";
  }
  OpCounter c;
  const double second_loss = policy->forward(batch).loss.item<double>();
  EXPECT_EQ(count(c, "aten::sin"), 0);
  EXPECT_EQ(count(c, "aten::rsqrt"), 0);
  EXPECT_EQ(second_loss, first_loss);
}

// Loss and gradients for a batch whose last 4 steps are padding; same seed for the VAE noise.
std::pair<double, std::vector<torch::Tensor>> loss_and_grads(Policy& policy, const Batch& batch) {
  policy.zero_grad();
  torch::manual_seed(42);
  auto out = policy.forward(batch);
  out.loss.backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : policy.parameters())
    grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return {out.loss.item<double>(), grads};
}

bool same_grads(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::allclose(a[i], b[i], 1e-6, 1e-7)) return false;
  return true;
}

TEST(ACTTrain, MaskedL1IgnoresPaddedSteps) {
  torch::manual_seed(0);
  auto cfg = small_act_config(1, 32);
  cfg.dropout = 0.0;
  auto policy = make_policy(cfg);
  policy->train();
  auto batch = random_act_batch(cfg, 2, 5);
  batch["action_is_pad"].narrow(1, 6, 4).fill_(true);
  auto base = loss_and_grads(*policy, batch);

  auto padded_changed = batch;
  padded_changed["action"] = batch["action"].clone();
  padded_changed["action"].narrow(1, 6, 4).add_(5.0);
  auto p = loss_and_grads(*policy, padded_changed);
  EXPECT_DOUBLE_EQ(p.first, base.first);
  EXPECT_TRUE(same_grads(p.second, base.second));

  auto valid_changed = batch;
  valid_changed["action"] = batch["action"].clone();
  valid_changed["action"].narrow(1, 2, 1).add_(5.0);
  auto v = loss_and_grads(*policy, valid_changed);
  EXPECT_NE(v.first, base.first);
  EXPECT_FALSE(same_grads(v.second, base.second));
}

TEST(ACTTrain, L1IsMeanOverValidStepsAndKlIsWeighted) {
  torch::manual_seed(0);
  auto cfg = small_act_config(1, 32);
  cfg.use_vae = false;  // no KL: loss == masked mean L1
  auto policy = make_policy(cfg);
  policy->eval();  // no dropout
  auto batch = random_act_batch(cfg, 2, 9);
  batch["action_is_pad"][0].narrow(0, 7, 3).fill_(true);
  auto pred = policy->predict_action_chunk(batch);
  auto err = (pred - batch["action"]).abs();  // (2, 10, 6)
  double sum = 0;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 10; ++t)
      if (!(b == 0 && t >= 7)) sum += err[b][t].sum().item<double>();
  const double expected = sum / ((20 - 3) * 6);
  auto out = policy->forward(batch);
  EXPECT_NEAR(out.loss.item<double>(), expected, 1e-5);
  EXPECT_NEAR(out.values.at("l1_loss").item<double>(), expected, 1e-5);
  EXPECT_EQ(out.values.count("kld_loss"), 0u);

  auto vcfg = small_act_config(1, 32);
  vcfg.kl_weight = 3.0;
  auto vae = make_policy(vcfg);
  vae->train();
  auto o = vae->forward(batch);
  ASSERT_TRUE(o.values.count("kld_loss"));
  EXPECT_GE(o.values.at("kld_loss").item<double>(), 0.0);
  EXPECT_NEAR(o.loss.item<double>(),
              o.values.at("l1_loss").item<double>() + 3.0 * o.values.at("kld_loss").item<double>(), 1e-4);
}

TEST(ACTInferenceQueue, SelectActionPopsTheChunkInOrder) {
  torch::manual_seed(0);
  auto cfg = small_act_config(1, 32);
  cfg.n_action_steps = 3;
  ACTPolicy policy(cfg);
  auto batch = random_act_batch(cfg, 2, 1);
  auto chunk = policy.predict_action_chunk(batch);  // (2, 10, 6)
  auto other = random_act_batch(cfg, 2, 2);
  EXPECT_TRUE(torch::allclose(policy.select_action(batch), chunk.select(1, 0)));
  // Queued actions ignore the new observation until the queue is empty.
  EXPECT_TRUE(torch::allclose(policy.select_action(other), chunk.select(1, 1)));
  EXPECT_TRUE(torch::allclose(policy.select_action(other), chunk.select(1, 2)));
  auto other_chunk = policy.predict_action_chunk(other);
  EXPECT_TRUE(torch::allclose(policy.select_action(other), other_chunk.select(1, 0)));
  policy.reset();
  EXPECT_TRUE(torch::allclose(policy.select_action(batch), chunk.select(1, 0)));
}

TEST(ACTInferenceQueue, TemporalEnsemblerMatchesWeightedAverage) {
  const double k = 0.5;
  ACTTemporalEnsembler ens(k, 4);
  auto c1 = torch::randn({1, 4, 2});
  auto c2 = torch::randn({1, 4, 2});
  auto c3 = torch::randn({1, 4, 2});
  EXPECT_TRUE(torch::allclose(ens.update(c1), c1.select(1, 0)));
  // Step 2: action for t=1 predicted by c1 (index 1, oldest -> weight exp(0)) and c2 (index 0, weight exp(-k)).
  const double w0 = 1.0, w1 = std::exp(-k), w2 = std::exp(-2 * k);
  auto e2 = (c1.select(1, 1) * w0 + c2.select(1, 0) * w1) / (w0 + w1);
  EXPECT_TRUE(torch::allclose(ens.update(c2), e2, 1e-5, 1e-6));
  auto e3 = (c1.select(1, 2) * w0 + c2.select(1, 1) * w1 + c3.select(1, 0) * w2) / (w0 + w1 + w2);
  EXPECT_TRUE(torch::allclose(ens.update(c3), e3, 1e-5, 1e-6));
  ens.reset();
  EXPECT_TRUE(torch::allclose(ens.update(c3), c3.select(1, 0)));
}

}  // namespace
}  // namespace lerobot
