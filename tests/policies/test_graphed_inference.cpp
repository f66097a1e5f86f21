// GraphedChunkPredictor: on CPU it is the policy itself and says why; on a GPU the replayed
// inference equals the eager one (ACT exactly as computed; Diffusion's whole denoising loop, its
// initial noise drawn from the same generator state). select_action takes its chunks from the
// chunk source a predictor installs (so eval and InferencePolicy replay too), and from the policy
// again once the predictor is gone.
#include <gtest/gtest.h>

#include "lerobot/common/device_graph.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/graphed_inference.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

Batch to_device(const Batch& b, const torch::Device& d) {
  Batch out;
  for (const auto& [k, v] : b) out[k] = v.to(d);
  return out;
}

TEST(GraphedInference, OnCpuItIsThePolicyAndSaysWhy) {
  torch::manual_seed(0);
  ACTPolicy policy(testing::small_act_config());
  policy.eval();
  torch::NoGradGuard no_grad;
  GraphedChunkPredictor graphed(policy);
  EXPECT_NE(graphed.why_not().find("cpu"), std::string::npos) << graphed.why_not();
  const Batch batch = testing::random_act_batch(testing::small_act_config(), 2, 3);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(torch::equal(graphed.predict(batch), policy.predict_action_chunk(batch)));
  EXPECT_FALSE(graphed.replaying());
  GraphedChunkPredictor off(policy, /*enabled=*/false);
  EXPECT_EQ(off.why_not(), "graphs turned off");
}

// select_action refills its queue from the chunk source while one is set: one call per
// n_action_steps actions, its values the actions; without the source, the policy's own chunks.
template <typename P>
void check_select_action_uses_the_chunk_source(P& policy, const Batch& obs, int64_t n_action_steps) {
  policy.eval();
  torch::NoGradGuard no_grad;
  int calls = 0;
  policy.set_chunk_source([&](const Batch& b) {
    ++calls;
    return torch::full_like(policy.predict_action_chunk(b), static_cast<double>(calls));
  });
  policy.reset();
  for (int64_t i = 0; i < 2 * n_action_steps + 1; ++i) {
    const torch::Tensor a = policy.select_action(obs);
    const int expected_call = static_cast<int>(i / n_action_steps) + 1;
    ASSERT_EQ(calls, expected_call) << "action " << i;
    EXPECT_TRUE(torch::all(a == static_cast<double>(expected_call)).item<bool>()) << "action " << i;
  }
  ASSERT_EQ(calls, 3);
  policy.set_chunk_source(nullptr);
  EXPECT_FALSE(policy.has_chunk_source());
  policy.reset();
  const torch::Tensor own = policy.select_action(obs);  // the policy's own chunk again
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(torch::all(own == 4.0).item<bool>());
}

TEST(ChunkSource, ActsSelectActionTakesItsChunksFromTheSourceWhileOneIsSet) {
  torch::manual_seed(0);
  ACTConfig cfg = testing::small_act_config();
  cfg.n_action_steps = 3;
  ACTPolicy policy(cfg);
  Batch obs = testing::random_act_batch(cfg, 2, 3);
  obs.erase("action");
  obs.erase("action_is_pad");
  check_select_action_uses_the_chunk_source(policy, obs, cfg.n_action_steps);
}

TEST(ChunkSource, DiffusionsSelectActionTakesItsChunksFromTheSourceWhileOneIsSet) {
  torch::manual_seed(0);
  DiffusionConfig cfg = testing::small_diffusion_config();
  cfg.num_inference_steps = 3;
  DiffusionPolicy policy(cfg);
  // select_action takes one observation step per call and queues n_obs_steps of them.
  Batch obs;
  for (const auto& [k, v] : testing::random_diffusion_batch(cfg, 2, 3))
    if (k.rfind("observation.", 0) == 0) obs[k] = v.select(1, 0);
  check_select_action_uses_the_chunk_source(policy, obs, cfg.n_action_steps);
}

TEST(GraphedInference, ServingSelectActionOnCpuChangesNothingAndEndsWithThePredictor) {
  DiffusionConfig cfg = testing::small_diffusion_config();
  cfg.num_inference_steps = 3;
  torch::manual_seed(0);
  DiffusionPolicy policy(cfg);
  policy.eval();
  torch::NoGradGuard no_grad;
  Batch obs;
  for (const auto& [k, v] : testing::random_diffusion_batch(cfg, 2, 4))
    if (k.rfind("observation.", 0) == 0) obs[k] = v.select(1, 0);
  auto actions = [&] {
    torch::manual_seed(9);
    policy.reset();
    std::vector<torch::Tensor> out;
    for (int i = 0; i < 2 * cfg.n_action_steps; ++i) out.push_back(policy.select_action(obs));
    return torch::stack(out);
  };
  const torch::Tensor plain = actions();
  {
    GraphedChunkPredictor graphed(policy);
    graphed.serve_select_action();
    EXPECT_TRUE(policy.has_chunk_source());
    EXPECT_TRUE(torch::equal(actions(), plain));
    EXPECT_NE(graphed.why_not().find("cpu"), std::string::npos) << graphed.why_not();
  }
  EXPECT_FALSE(policy.has_chunk_source());
}

bool graphs_here() { return torch::cuda::is_available() && DeviceGraph::available(torch::Device(torch::kCUDA, 0)); }

TEST(GraphedInference, OnCudaActReplaysEqualTheEagerChunks) {
  if (!graphs_here()) GTEST_SKIP() << "needs a CUDA device and a CUDA build with graphs (none here)";
  const torch::Device cuda(torch::kCUDA, 0);
  torch::manual_seed(0);
  ACTPolicy policy(testing::small_act_config());
  policy.to(cuda);
  policy.eval();
  torch::NoGradGuard no_grad;
  GraphedChunkPredictor graphed(policy);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const Batch batch = to_device(testing::random_act_batch(testing::small_act_config(), 2, seed), cuda);
    const torch::Tensor eager = policy.predict_action_chunk(batch);
    const torch::Tensor replayed = graphed.predict(batch);
    EXPECT_LT((replayed - eager).abs().max().item<double>(), 1e-5) << "call " << seed;
  }
  EXPECT_TRUE(graphed.replaying()) << graphed.why_not();
  EXPECT_EQ(graphed.why_not(), "");
}

TEST(GraphedInference, OnCudaDiffusionsDenoisingLoopReplaysWithTheSameNoise) {
  if (!graphs_here()) GTEST_SKIP() << "needs a CUDA device and a CUDA build with graphs (none here)";
  const torch::Device cuda(torch::kCUDA, 0);
  for (const std::string scheduler : {"DDIM", "DDPM"}) {
    DiffusionConfig cfg = testing::small_diffusion_config();
    cfg.noise_scheduler_type = scheduler;
    cfg.num_inference_steps = 10;
    torch::manual_seed(0);
    DiffusionPolicy policy(cfg);
    policy.to(cuda);
    policy.eval();
    torch::NoGradGuard no_grad;
    GraphedChunkPredictor graphed(policy);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const Batch batch = to_device(testing::random_diffusion_batch(cfg, 2, seed), cuda);
      torch::manual_seed(100 + seed);  // the same generator state for both: the same x_T (and DDPM's noise)
      const torch::Tensor eager = policy.predict_action_chunk(batch);
      torch::manual_seed(100 + seed);
      const torch::Tensor replayed = graphed.predict(batch);
      EXPECT_LT((replayed - eager).abs().max().item<double>(), 1e-4) << scheduler << " call " << seed;
    }
    EXPECT_TRUE(graphed.replaying()) << scheduler << ": " << graphed.why_not();
  }
}

TEST(GraphedInference, OnCudaSelectActionReplaysAndEqualsAnEagerTwin) {
  if (!graphs_here()) GTEST_SKIP() << "needs a CUDA device and a CUDA build with graphs (none here)";
  const torch::Device cuda(torch::kCUDA, 0);
  ACTConfig cfg = testing::small_act_config();
  cfg.n_action_steps = 2;
  torch::manual_seed(0);
  ACTPolicy graphed_policy(cfg), eager_policy(cfg);
  eager_policy.load_state_dict(graphed_policy.state_dict(), "the twin");
  graphed_policy.to(cuda);
  eager_policy.to(cuda);
  graphed_policy.eval();
  eager_policy.eval();
  torch::NoGradGuard no_grad;
  GraphedChunkPredictor graphed(graphed_policy);
  graphed.serve_select_action();
  for (uint64_t seed = 1; seed <= 12; ++seed) {  // a new observation every action: 6 chunks
    Batch obs = to_device(testing::random_act_batch(cfg, 2, seed), cuda);
    obs.erase("action");
    obs.erase("action_is_pad");
    const torch::Tensor a = graphed_policy.select_action(obs), b = eager_policy.select_action(obs);
    EXPECT_LT((a - b).abs().max().item<double>(), 1e-5) << "action " << seed;
  }
  EXPECT_TRUE(graphed.replaying()) << graphed.why_not();
}

}  // namespace
}  // namespace lerobot
