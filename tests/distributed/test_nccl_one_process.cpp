// --distributed.backend=nccl with one process: a real one-rank NCCL group (init, bucketed
// all-reduce through the GradReducer, barrier, shutdown) where CUDA and NCCL are present; a clear
// usage error naming the flag everywhere else.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/distributed/grad_reducer.h"
#include "lerobot/distributed/process_group.h"

using namespace lerobot;

namespace {

#ifdef LEROBOT_WITH_NCCL
constexpr bool kNcclBuild = true;
#else
constexpr bool kNcclBuild = false;
#endif

bool nccl_runs_here() { return kNcclBuild && torch::cuda::is_available(); }

}  // namespace

TEST(NcclOneProcess, RefusedWithAUsageErrorWhereItCannotRun) {
  if (nccl_runs_here()) GTEST_SKIP() << "CUDA and NCCL are present: NcclOneProcess.* runs the group itself";
  try {
    make_process_group(LaunchEnv{}, process_group_options("nccl", 5));
    FAIL() << "a one-process NCCL group was created without " << (kNcclBuild ? "a GPU" : "NCCL in the build");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--distributed.backend"), std::string::npos) << e.what();
  }
  // auto never picks NCCL without a GPU: the single-process group.
  EXPECT_EQ(make_process_group(LaunchEnv{}, process_group_options("auto", 5))->backend(), "single");
}

TEST(NcclOneProcess, InitAllReduceBucketsBarrierAndShutdown) {
  if (!nccl_runs_here())
    GTEST_SKIP() << (kNcclBuild ? "no CUDA device visible" : "this LibTorch has no c10d NCCL")
                 << ": the one-process NCCL group runs only on a GPU machine";
  auto pg = make_process_group(LaunchEnv{}, process_group_options("nccl", 60));
  ASSERT_EQ(pg->backend(), "nccl");
  EXPECT_EQ(pg->world_size(), 1);
  EXPECT_TRUE(pg->device().is_cuda());
  auto t = torch::arange(8, torch::TensorOptions().dtype(torch::kFloat).device(pg->device()));
  pg->all_reduce(t, ReduceOp::kAvg);
  EXPECT_TRUE(torch::equal(t.cpu(), torch::arange(8, torch::kFloat)));
  pg->barrier();
  EXPECT_EQ(pg->all_gather(2.5), std::vector<double>{2.5});

  // The bucketed reducer over NCCL: gradients equal the local ones (world 1), several buckets.
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(64, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                              torch::nn::ReLU(), torch::nn::Linear(256, 8));
  model->to(pg->device());
  GradReducerOptions ro;
  ro.bucket_cap_bytes = 64 * 1024;  // several buckets for ~100k parameters
  GradReducer reducer(*model, pg, ro);
  for (int step = 0; step < 3; ++step) {
    auto x = torch::randn({16, 64}, pg->device());
    model->zero_grad();
    model->forward(x).pow(2).mean().backward();
    std::vector<torch::Tensor> local;
    for (const auto& p : model->parameters()) local.push_back(p.grad().clone());
    reducer.synchronize();
    size_t i = 0;
    for (const auto& p : model->parameters()) EXPECT_TRUE(torch::allclose(p.grad(), local[i++], 1e-6, 1e-7));
  }
  pg->barrier();
}  // the reducer, then the group (NCCL shutdown) go here
