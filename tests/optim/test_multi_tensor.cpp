// The multi-tensor optimizer steps against torch::optim's own per-tensor steps: bit-identical
// parameters and state after several steps (several groups, a parameter that skips steps, weight
// decay, momentum, nesterov), the fused kernels where this LibTorch has them, and the step
// implementations that cannot run refused with a usage error.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lerobot/common/error.h"
#include "lerobot/common/op_counter.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/optim/grad_clip.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/optimizer_state.h"

using namespace lerobot;

namespace {

struct Model {
  std::vector<torch::Tensor> a, b;  // two param groups
  std::vector<torch::Tensor> all() const {
    auto v = a;
    v.insert(v.end(), b.begin(), b.end());
    return v;
  }
};

Model make_model() {
  torch::manual_seed(3);
  Model m;
  for (auto shape : std::vector<std::vector<int64_t>>{{4, 3}, {3}, {2, 2, 2}})
    m.a.push_back(torch::randn(shape).set_requires_grad(true));
  for (auto shape : std::vector<std::vector<int64_t>>{{5}, {3, 1}})
    m.b.push_back(torch::randn(shape).set_requires_grad(true));
  return m;
}

std::unique_ptr<torch::optim::Optimizer> optimizer_for(const OptimizerConfig& cfg, const Model& m, OptimizerImpl impl) {
  return make_optimizer(cfg, {ParamGroup{m.a, {}, std::nullopt}, ParamGroup{m.b, {}, 0.03}}, impl);
}

// Same gradients for both models each step; parameter a[1] gets none on step 1 (its state then
// lags one step behind the others, so a group holds two step counts).
void run_steps(torch::optim::Optimizer& opt, const Model& m, int steps) {
  for (int s = 0; s < steps; ++s) {
    torch::manual_seed(100 + s);
    const auto params = m.all();
    for (size_t i = 0; i < params.size(); ++i) {
      auto p = params[i];
      if (s == 1 && i == 1) {
        p.mutable_grad() = torch::Tensor();
        continue;
      }
      p.mutable_grad() = torch::randn(p.sizes());
    }
    opt.step();
  }
}

void expect_bit_identical(const Model& x, const Model& y) {
  const auto px = x.all(), py = y.all();
  for (size_t i = 0; i < px.size(); ++i) EXPECT_TRUE(torch::equal(px[i], py[i])) << "param " << i;
}

void expect_same_state(const torch::optim::Optimizer& x, const torch::optim::Optimizer& y) {
  const TensorMap sx = optimizer_state_tensors(x), sy = optimizer_state_tensors(y);
  ASSERT_EQ(sx.size(), sy.size());
  for (const auto& [k, v] : sx) {
    ASSERT_TRUE(sy.count(k)) << k;
    EXPECT_TRUE(torch::equal(v, sy.at(k))) << k;
  }
}

void compare_with_per_tensor(const OptimizerConfig& cfg) {
  Model ref = make_model(), ours = make_model();
  auto ref_opt = optimizer_for(cfg, ref, OptimizerImpl::kPerTensor);
  auto our_opt = optimizer_for(cfg, ours, OptimizerImpl::kForeach);
  EXPECT_EQ(optimizer_impl_of(*our_opt), OptimizerImpl::kForeach);
  run_steps(*ref_opt, ref, 5);
  run_steps(*our_opt, ours, 5);
  expect_bit_identical(ref, ours);
  expect_same_state(*ref_opt, *our_opt);
  EXPECT_FALSE(torch::equal(ref.a[0], make_model().a[0])) << "the parameters moved";
}

TEST(MultiTensorOptim, AdamWIsBitIdenticalToPerTensor) {
  register_optim_configs();
  AdamWConfig cfg;
  cfg.lr = 0.01;
  cfg.weight_decay = 0.1;
  compare_with_per_tensor(cfg);
}

TEST(MultiTensorOptim, AdamWithL2IsBitIdenticalToPerTensor) {
  register_optim_configs();
  AdamConfig cfg;
  cfg.lr = 0.02;
  cfg.betas = {0.8, 0.95};
  cfg.weight_decay = 1e-2;
  compare_with_per_tensor(cfg);
}

TEST(MultiTensorOptim, SgdVariantsAreBitIdenticalToPerTensor) {
  register_optim_configs();
  for (bool nesterov : {false, true}) {
    SGDConfig cfg;
    cfg.lr = 0.05;
    cfg.momentum = 0.9;
    cfg.dampening = nesterov ? 0.0 : 0.1;
    cfg.nesterov = nesterov;
    cfg.weight_decay = 1e-3;
    compare_with_per_tensor(cfg);
  }
  SGDConfig plain;
  plain.lr = 0.1;
  plain.momentum = 0.0;
  compare_with_per_tensor(plain);
}

TEST(MultiTensorOptim, StateLoadedIntoTheOtherImplementationContinuesIdentically) {
  register_optim_configs();
  AdamWConfig cfg;
  cfg.lr = 0.01;
  cfg.weight_decay = 0.05;
  Model a = make_model(), b = make_model();
  auto opt_a = optimizer_for(cfg, a, OptimizerImpl::kForeach);
  run_steps(*opt_a, a, 3);
  // b takes a's parameters and state, then both continue: foreach vs per-tensor.
  for (size_t i = 0; i < a.all().size(); ++i) b.all()[i].detach().copy_(a.all()[i].detach());
  auto opt_b = optimizer_for(cfg, b, OptimizerImpl::kPerTensor);
  load_optimizer_state(*opt_b, optimizer_state_tensors(*opt_a), optimizer_param_groups_json(*opt_a, std::nullopt),
                       "test");
  run_steps(*opt_a, a, 2);
  run_steps(*opt_b, b, 2);
  expect_bit_identical(a, b);
}

TEST(MultiTensorOptim, FusedMatchesWhereAvailableAndIsRefusedElsewhere) {
  register_optim_configs();
  AdamWConfig cfg;
  cfg.lr = 0.01;
  cfg.weight_decay = 0.1;
  const c10::Device cpu(c10::kCPU);
  if (!fused_adam_available(cpu)) {
    Model m = make_model();
    try {
      optimizer_for(cfg, m, OptimizerImpl::kFused);
      FAIL() << "fused Adam accepted on a LibTorch without CPU fused kernels";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find("--optimizer_impl"), std::string::npos) << e.what();
    }
  } else {
    Model ref = make_model(), ours = make_model();
    auto ref_opt = optimizer_for(cfg, ref, OptimizerImpl::kPerTensor);
    auto our_opt = optimizer_for(cfg, ours, OptimizerImpl::kFused);
    run_steps(*ref_opt, ref, 5);
    run_steps(*our_opt, ours, 5);
    const auto pr = ref.all(), po = ours.all();
    for (size_t i = 0; i < pr.size(); ++i) EXPECT_TRUE(torch::allclose(pr[i], po[i], 1e-5, 1e-6)) << i;
  }
  SGDConfig sgd;
  Model m = make_model();
  EXPECT_THROW(optimizer_for(sgd, m, OptimizerImpl::kFused), Error);
  EXPECT_EQ(parse_optimizer_impl("foreach"), OptimizerImpl::kForeach);
  EXPECT_THROW(parse_optimizer_impl("fast"), Error);
  // auto on CPU: foreach (fused is chosen only on CUDA).
  EXPECT_EQ(optimizer_impl_of(*optimizer_for(cfg, m, OptimizerImpl::kAuto)), OptimizerImpl::kForeach);
}

// The point of the multi-tensor step: the number of operators does not grow with the number of
// parameter tensors (AdamW's step; clipping's norms too, and its multiply from LibTorch 2.1 on).
TEST(MultiTensorOptim, OperatorCountDoesNotGrowWithTheTensorCount) {
  register_optim_configs();
  AdamWConfig cfg;
  cfg.weight_decay = 0.1;
  struct Counts {
    int64_t step = 0, clip = 0;
  };
  auto count = [&](int tensors, OptimizerImpl impl) {
    std::vector<torch::Tensor> ps;
    for (int i = 0; i < tensors; ++i) {
      ps.push_back(torch::randn({8}).set_requires_grad(true));
      ps.back().mutable_grad() = torch::randn({8});
    }
    auto opt = make_optimizer(cfg, {ParamGroup{ps, {}, std::nullopt}}, impl);
    opt->step();  // state initialisation happens here, not counted
    Counts c;
    {
      OpCounter counter;
      opt->step();
      c.step = counter.ops();
      EXPECT_EQ(counter.syncs(), 0) << "an optimizer step never reads a value back";
    }
    OpCounter counter;
    if (impl == OptimizerImpl::kPerTensor) {
      for (auto& p : ps) at::linalg_vector_norm(p.grad(), 2);  // what clipping did before: a norm per tensor
    } else {
      clip_grad_norm_(ps, 1.0);
    }
    c.clip = counter.ops();
    return c;
  };
  const Counts f10 = count(10, OptimizerImpl::kForeach), f100 = count(100, OptimizerImpl::kForeach);
  const Counts p10 = count(10, OptimizerImpl::kPerTensor), p100 = count(100, OptimizerImpl::kPerTensor);
  EXPECT_GE(p100.step - p10.step, 90 * 8) << "per-tensor AdamW: about nine operators per tensor";
  EXPECT_EQ(f100.step, f10.step) << "foreach AdamW: the same operators for 10 or 100 tensors";
  EXPECT_LE(f100.step, 12);
  EXPECT_GE(p100.clip - p10.clip, 90);
#if LEROBOT_TORCH_AT_LEAST(2, 1)
  EXPECT_EQ(f100.clip, f10.clip);
#else
  EXPECT_LE(f100.clip - f10.clip, 90) << "1.13: only the scaling multiply is per tensor";
#endif
}

// One group holding float32 and bfloat16 parameters (SmolVLA with a bfloat16 backbone trains
// bfloat16 expert layers beside float32 projections): every implementation steps both as the
// per-tensor step does. The fused kernels take one dtype per call; given the mixed group at once,
// CUDA's refused it ("params, grads, exp_avgs, and exp_avg_sqs must have same dtype", H200,
// 2026-11-27). On the CPU the foreach step stays bit-identical; the fused kernels, and the CUDA
// foreach kernels (they compute bfloat16 in float32), agree to bfloat16's precision.
TEST(MultiTensorOptim, AGroupOfFloat32AndBfloat16ParametersStepsAsPerTensor) {
  register_optim_configs();
  AdamWConfig cfg;
  cfg.lr = 0.01;
  cfg.weight_decay = 0.1;
  std::vector<c10::Device> devices = {c10::Device(c10::kCPU)};
  if (torch::cuda::is_available()) devices.emplace_back(c10::kCUDA, 0);
  auto make = [](const c10::Device& device) {
    torch::manual_seed(5);
    std::vector<torch::Tensor> ps;
    for (auto dtype : {torch::kFloat, torch::kBFloat16, torch::kFloat, torch::kBFloat16})
      ps.push_back(torch::randn({6, 5}).to(device, dtype).set_requires_grad(true));
    return ps;
  };
  auto steps = [](torch::optim::Optimizer& opt, const std::vector<torch::Tensor>& ps) {
    for (int s = 0; s < 4; ++s) {
      torch::manual_seed(200 + s);
      for (auto p : ps) p.mutable_grad() = torch::randn(p.sizes()).to(p.options().requires_grad(false));
      opt.step();
    }
  };
  int compared = 0;
  for (const auto& device : devices) {
    for (auto impl : {OptimizerImpl::kForeach, OptimizerImpl::kFused}) {
      if (impl == OptimizerImpl::kFused && !fused_adam_available(device)) continue;
      const auto ref = make(device), ours = make(device);
      auto ref_opt = make_optimizer(cfg, {ParamGroup{ref, {}, std::nullopt}}, OptimizerImpl::kPerTensor);
      auto our_opt = make_optimizer(cfg, {ParamGroup{ours, {}, std::nullopt}}, impl);
      steps(*ref_opt, ref);
      steps(*our_opt, ours);
      const std::string what = device.str() + " " + optimizer_impl_name(impl);
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_EQ(ours[i].scalar_type(), ref[i].scalar_type()) << what << " param " << i;
        EXPECT_FALSE(torch::equal(ours[i], make(device)[i])) << what << " param " << i << " did not move";
        if (device.is_cpu() && impl == OptimizerImpl::kForeach)
          EXPECT_TRUE(torch::equal(ours[i], ref[i])) << what << " param " << i;
        else
          EXPECT_TRUE(torch::allclose(ours[i].to(torch::kFloat), ref[i].to(torch::kFloat), 2e-2, 2e-2))
              << what << " param " << i;
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 1);
}

}  // namespace
