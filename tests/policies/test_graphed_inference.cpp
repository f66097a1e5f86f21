// GraphedChunkPredictor: on CPU it is the policy itself and says why; on a GPU the replayed
// inference equals the eager one (ACT exactly as computed; Diffusion's whole denoising loop, its
// initial noise drawn from the same generator state).
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

}  // namespace
}  // namespace lerobot
