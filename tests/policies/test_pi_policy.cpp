// π0 / π0.5 beyond the reference numbers: gradient checkpointing (the same loss and gradients,
// less activation memory held between forward and backward), overfitting one batch with AdamW,
// LeRobot's checkpoint key remapping (fix_pi_checkpoint_keys against LeRobot's own output in
// tests/policies/data/pi_reference.json → "fix_keys", and on a whole tiny state dict), and a
// safetensors save/load round trip. Tiny policies at pi_reference.json's sizes (pi_test_helpers.h).
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/pi/pi_checkpoint_keys.h"
#include "pi_test_helpers.h"
#include "policy_test_helpers.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::make_pi_policy;
using testing::pi_batch;
using testing::pi_fill;
using testing::pi_flow_time;
using testing::pi_noise;
using testing::reference_json;

Json tiny_of(const std::string& layout) { return reference_json("pi")["layouts"][layout]["config"]["tiny"]; }
std::string kind_of(const std::string& layout) { return reference_json("pi")["layouts"][layout]["kind"]; }
bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// ---------------------------------------------------------------------------------------------
// Gradient checkpointing

struct GradRun {
  double loss = 0;
  std::map<std::string, torch::Tensor> grads;  // undefined where the parameter got none
  bool checkpointing = false;
};

// One training forward and backward at the script's weights, noise and time. `between` runs after
// the forward and before the backward (the planted-defect test perturbs a weight there).
GradRun forward_backward(const std::string& kind, const Json& tiny, bool checkpointing,
                         const std::function<void(PiPolicy&)>& between = {}) {
  auto policy = make_pi_policy(kind, tiny, [&](PiConfigBase& c) { c.gradient_checkpointing = checkpointing; });
  pi_fill(*policy);
  policy->train();
  auto out = policy->forward(pi_batch(tiny), pi_noise(tiny), pi_flow_time(tiny));
  if (between) between(*policy);
  out.loss.backward();
  GradRun r;
  r.loss = out.loss.item<double>();
  r.checkpointing = policy->model->paligemma_with_expert->gradient_checkpointing();
  for (const auto& p : policy->named_parameters(true))
    r.grads[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : torch::Tensor();
  return r;
}

// Names whose gradients differ: max |a - b| > rtol · max |b| (+1e-30), or defined on one side only.
std::vector<std::string> gradient_mismatches(const GradRun& a, const GradRun& b, double rtol, double* worst) {
  std::vector<std::string> bad;
  *worst = 0;
  for (const auto& [name, gb] : b.grads) {
    const auto it = a.grads.find(name);
    if (it == a.grads.end() || it->second.defined() != gb.defined()) {
      bad.push_back(name + " (gradient present on one side only)");
      continue;
    }
    if (!gb.defined()) continue;
    const double diff = (it->second.to(torch::kDouble) - gb.to(torch::kDouble)).abs().max().item<double>();
    const double scale = gb.to(torch::kDouble).abs().max().item<double>() + 1e-30;
    *worst = std::max(*worst, diff / scale);
    if (diff > rtol * scale) bad.push_back(name + " (max diff " + std::to_string(diff) + " of " + std::to_string(scale) + ")");
  }
  if (a.grads.size() != b.grads.size()) bad.push_back("parameter count");
  return bad;
}

struct CheckpointCase {
  std::string layout;
  bool expert_only;  // train_expert_only turned on over the layout's config
};

void PrintTo(const CheckpointCase& c, std::ostream* os) { *os << c.layout << (c.expert_only ? " + train_expert_only" : ""); }

class PiCheckpointing : public ::testing::TestWithParam<CheckpointCase> {};

TEST_P(PiCheckpointing, SameLossAndEveryGradientAsWithout) {
  Json tiny = tiny_of(GetParam().layout);
  if (GetParam().expert_only) tiny["train_expert_only"] = true;
  const auto kind = kind_of(GetParam().layout);
  const auto plain = forward_backward(kind, tiny, false);
  const auto ckpt = forward_backward(kind, tiny, true);
  ASSERT_FALSE(plain.checkpointing);
  ASSERT_TRUE(ckpt.checkpointing);
  EXPECT_NEAR(ckpt.loss, plain.loss, 1e-6 * std::abs(plain.loss)) << "loss";
  double worst = 0;
  const auto bad = gradient_mismatches(ckpt, plain, 1e-6, &worst);
  for (const auto& b : bad) ADD_FAILURE() << b;
  int64_t with_grad = 0;
  for (const auto& [name, g] : plain.grads) with_grad += g.defined();
  EXPECT_GT(with_grad, 0);
  std::cout << "[ checkpoint ] " << GetParam().layout << (GetParam().expert_only ? " expert-only" : "")
            << ": loss " << plain.loss << " vs " << ckpt.loss << ", " << with_grad << " of " << plain.grads.size()
            << " parameters with gradients, worst relative gradient difference " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Layouts, PiCheckpointing,
                         ::testing::Values(CheckpointCase{"pi0", false}, CheckpointCase{"pi05", false},
                                           CheckpointCase{"pi0_expert_only", false}, CheckpointCase{"pi05", true}),
                         [](const auto& info) { return info.param.layout + (info.param.expert_only ? "_expert_only" : ""); });

// The comparison above catches a recomputation that differs from the first forward: between the
// checkpointed forward and its backward, one expert weight changes by 1e-3, so the backward's
// recomputation runs with another weight than the forward did (a stand-in for any recomputation
// defect: different inputs, mask, rotary table or dropout). Loss unchanged; gradients must differ.
TEST(PiCheckpointingSelfCheck, ADifferingRecomputationIsCaught) {
  for (const bool expert_only : {false, true}) {
    Json tiny = tiny_of("pi05");
    tiny["train_expert_only"] = expert_only;
    const auto plain = forward_backward("pi05", tiny, false);
    const auto planted = forward_backward("pi05", tiny, true, [](PiPolicy& policy) {
      torch::NoGradGuard no_grad;
      bool found = false;
      for (auto& p : policy.named_parameters(true))
        if (p.key().find("gemma_expert.model.layers.0.mlp.down_proj.weight") != std::string::npos) {
          p.value().add_(1e-3);
          found = true;
        }
      ASSERT_TRUE(found);
    });
    EXPECT_NEAR(planted.loss, plain.loss, 1e-6 * std::abs(plain.loss));
    double worst = 0;
    const auto bad = gradient_mismatches(planted, plain, 1e-6, &worst);
    EXPECT_FALSE(bad.empty()) << "a recomputation with a changed weight went unnoticed";
    std::cout << "[ planted    ] expert_only=" << expert_only << ": " << bad.size()
              << " gradients flagged, worst relative difference " << worst << "\n";
  }
}

// glibc's bytes in use: small blocks in every arena plus mmapped blocks (LibTorch's CPU tensors).
int64_t heap_bytes() {
  const auto m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

// Heap bytes still held after the training forward (the autograd graph's saved activations and
// the outputs), before the backward; measured on a second step so one-time allocations are out.
int64_t activation_bytes(const std::string& kind, const Json& tiny, bool checkpointing, double* loss) {
  auto policy = make_pi_policy(kind, tiny, [&](PiConfigBase& c) { c.gradient_checkpointing = checkpointing; });
  pi_fill(*policy);
  policy->train();
  const auto batch = pi_batch(tiny);
  const auto noise = pi_noise(tiny), time = pi_flow_time(tiny);
  int64_t held = 0;
  for (int step = 0; step < 2; ++step) {
    for (auto& p : policy->parameters()) p.mutable_grad() = torch::Tensor();
    const int64_t before = heap_bytes();
    auto out = policy->forward(batch, noise, time);
    held = heap_bytes() - before;
    out.loss.backward();
    *loss = out.loss.item<double>();
  }
  return held;
}

TEST(PiCheckpointingMemory, LessActivationMemoryHeldBeforeBackward) {
  for (const std::string layout : {"pi0", "pi05"}) {
    // Deep enough that the layer pairs' activations dominate: 6 layer pairs, batch 4, 3 cameras.
    Json tiny = tiny_of(layout);
    tiny["gemma"]["gemma_2b"]["depth"] = 6;
    tiny["gemma"]["gemma_300m"]["depth"] = 6;
    tiny["batch"] = 4;
    tiny["cameras"]["observation.images.side"] = {3, 32, 32};
    double loss_plain = 0, loss_ckpt = 0;
    const int64_t plain = activation_bytes(kind_of(layout), tiny, false, &loss_plain);
    const int64_t ckpt = activation_bytes(kind_of(layout), tiny, true, &loss_ckpt);
    const double ratio = static_cast<double>(ckpt) / static_cast<double>(plain);
    std::cout << "[ memory     ] " << layout << " depth 6, batch 4, 3 cameras: held after forward " << plain
              << " bytes without checkpointing, " << ckpt << " with (ratio " << ratio << "); loss " << loss_plain
              << " / " << loss_ckpt << "\n";
    EXPECT_GT(plain, 0);
    EXPECT_LT(ratio, 0.25) << layout;  // seen: 0.046
    EXPECT_NEAR(loss_ckpt, loss_plain, 1e-6 * std::abs(loss_plain));
  }
}

// ---------------------------------------------------------------------------------------------
// Overfitting one batch

TEST(PiOverfit, AdamWDrivesTheLossOnOneBatchBelowATenth) {
  for (const std::string layout : {"pi05", "pi0"}) {
    const Json tiny = tiny_of(layout);
    torch::manual_seed(0);
    auto policy = make_pi_policy(kind_of(layout), tiny);
    policy->train();
    const auto batch = pi_batch(tiny);
    const auto noise = pi_noise(tiny), time = pi_flow_time(tiny);
    std::vector<torch::Tensor> params;
    for (auto& p : policy->parameters())
      if (p.requires_grad()) params.push_back(p);
    torch::optim::AdamW opt(params, torch::optim::AdamWOptions(1e-3).weight_decay(0.0));
    const auto t0 = std::chrono::steady_clock::now();
    double first = 0, last = 0;
    const int steps = 150;
    for (int step = 0; step < steps; ++step) {
      opt.zero_grad();
      auto loss = policy->forward(batch, noise, time).loss;
      loss.backward();
      opt.step();
      const double v = loss.item<double>();
      if (step == 0) first = v;
      last = v;
      ASSERT_TRUE(std::isfinite(v)) << "step " << step;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[ overfit    ] " << layout << ": loss " << first << " -> " << last << " after " << steps
              << " AdamW steps (lr 1e-3), " << secs << " s\n";
    EXPECT_LT(last, 0.1 * first) << layout;
  }
}

// ---------------------------------------------------------------------------------------------
// LeRobot's checkpoint key remapping

TensorMap marked(const Json& names) {
  TensorMap m;
  float i = 0;
  for (const auto& n : names) m[n.get<std::string>()] = torch::full({2}, i++);
  return m;
}

TEST(PiCheckpointKeys, MatchesLeRobotsFixPytorchStateDictKeys) {
  for (const std::string kind : {"pi0", "pi05"}) {
    const bool pi05 = kind == "pi05";
    const auto& ref = reference_json("pi")["fix_keys"][kind];
    const TensorMap in = marked(ref["input"]);
    std::vector<std::string> expected = ref["output"].get<std::vector<std::string>>();
    std::sort(expected.begin(), expected.end());
    // The JSON holds _fix_pytorch_state_dict_keys's output, before from_pretrained's "model." step.
    std::vector<std::string> fixed;
    for (const auto& [k, v] : fix_pi_state_dict_keys(in, pi05, /*expert_adarms=*/pi05)) fixed.push_back(k);
    std::sort(fixed.begin(), fixed.end());
    EXPECT_EQ(fixed, expected) << kind;
    // The whole remapping: the same keys with "model." where it lacks.
    std::vector<std::string> log;
    const TensorMap out = fix_pi_checkpoint_keys(in, pi05, pi05, &log);
    std::set<std::string> want;
    for (const auto& k : expected) want.insert(starts_with(k, "model.") ? k : "model." + k);
    std::set<std::string> got;
    for (const auto& [k, v] : out) got.insert(k);
    EXPECT_EQ(got, want) << kind;
    // Values travel with their keys; embed_tokens is a copy of lm_head, not an alias.
    const auto lm_head = in.at("paligemma_with_expert.paligemma.lm_head.weight");
    const auto embed = out.at("model.paligemma_with_expert.paligemma.model.language_model.embed_tokens.weight");
    EXPECT_TRUE(torch::equal(embed, lm_head));
    EXPECT_NE(embed.data_ptr(), lm_head.data_ptr());
    EXPECT_TRUE(out.at("model.paligemma_with_expert.paligemma.lm_head.weight").is_same(lm_head));
    if (pi05) {
      EXPECT_TRUE(torch::equal(out.at("model.time_mlp_out.bias"), in.at("action_time_mlp_out.bias")));
      EXPECT_TRUE(torch::equal(out.at("model.time_mlp_in.weight"), in.at("time_mlp_in.weight")));
    } else {
      EXPECT_TRUE(torch::equal(out.at("model.action_time_mlp_in.weight"), in.at("time_mlp_in.weight")));
    }
    for (const auto& l : log) std::cout << "[ fix_keys   ] " << kind << ": " << l << "\n";
    EXPECT_FALSE(log.empty());
    EXPECT_EQ(log.back(), "Remapped " + std::to_string(ref["output"].size() - 1) + " state dict keys");
  }
}

// An openpi-style checkpoint of a whole tiny policy: LeRobot's names without "model.", π0's time
// MLP under π0.5's names and vice versa, and for π0.5 the keys LeRobot drops (plain expert norms,
// state_proj). The remapping gives back exactly the policy's names and tensors, and it loads.
TEST(PiCheckpointKeys, AWholeOpenpiStyleStateDictRemapsToThePolicysNames) {
  for (const std::string layout : {"pi0", "pi05"}) {
    const bool pi05 = layout == "pi05";
    auto policy = make_pi_policy(reference_json("pi")["layouts"][layout]);
    pi_fill(*policy);
    const TensorMap state = policy->state_dict();
    TensorMap ckpt;
    int64_t renamed = 0;
    for (const auto& [name, t] : state) {
      ASSERT_TRUE(starts_with(name, "model.")) << name;
      std::string key = name.substr(6);
      if (!pi05 && starts_with(key, "action_time_mlp_")) key = key.substr(7), ++renamed;
      if (pi05 && starts_with(key, "time_mlp_")) key = "action_" + key, ++renamed;
      ckpt[key] = t;
    }
    EXPECT_EQ(renamed, 4);
    if (pi05) {
      ckpt["paligemma_with_expert.gemma_expert.model.layers.0.input_layernorm.weight"] = torch::ones({4});
      ckpt["paligemma_with_expert.gemma_expert.model.layers.1.post_attention_layernorm.weight"] = torch::ones({4});
      ckpt["paligemma_with_expert.gemma_expert.model.norm.weight"] = torch::ones({4});
      ckpt["state_proj.weight"] = torch::ones({4, 4});
      ckpt["state_proj.bias"] = torch::ones({4});
    }
    std::vector<std::string> log;
    const TensorMap out = fix_pi_checkpoint_keys(ckpt, pi05, /*expert_adarms=*/pi05, &log);
    std::vector<std::string> want, got;
    for (const auto& [k, v] : state) want.push_back(k);
    for (const auto& [k, v] : out) got.push_back(k);
    EXPECT_EQ(got, want) << layout;
    for (const auto& [k, v] : state)
      if (out.count(k)) {
        EXPECT_TRUE(torch::equal(out.at(k), v)) << k;
      }
    auto fresh = make_pi_policy(reference_json("pi")["layouts"][layout]);
    EXPECT_NO_THROW(fresh->load_state_dict(out, "openpi-style"));
    std::cout << "[ fix_keys   ] " << layout << ": " << ckpt.size() << " checkpoint keys -> " << out.size()
              << " policy keys; " << log.size() << " log lines, last: " << (log.empty() ? "" : log.back()) << "\n";
  }
}

// ---------------------------------------------------------------------------------------------
// Save / load

TEST(PiSaveLoad, SafetensorsRoundTripGivesBitIdenticalChunks) {
  for (const std::string layout : {"pi0", "pi05", "pi05_bf16"}) {
    const auto& lay = reference_json("pi")["layouts"][layout];
    const Json tiny = lay["config"]["tiny"];
    torch::manual_seed(7);
    auto saved = make_pi_policy(lay);
    pi_fill(*saved);
    saved->eval();
    const auto batch = pi_batch(tiny);
    const auto noise = pi_noise(tiny);
    const auto expected = saved->predict_action_chunk(batch, noise);
    const auto state = saved->state_dict();

    const std::filesystem::path dir = testing::make_temp_dir("pi_round_trip");
    const auto file = dir / "model.safetensors";
    save_safetensors(file, state);
    const TensorMap loaded = load_safetensors(file);
    ASSERT_EQ(loaded.size(), state.size());
    std::set<torch::ScalarType> dtypes;
    for (const auto& [name, t] : state) {
      ASSERT_TRUE(loaded.count(name)) << name;
      EXPECT_EQ(loaded.at(name).scalar_type(), t.scalar_type()) << name;
      EXPECT_TRUE(torch::equal(loaded.at(name), t)) << name;
      dtypes.insert(t.scalar_type());
    }
    if (tiny["dtype"] == "bfloat16") {
      EXPECT_TRUE(dtypes.count(torch::kBFloat16)) << "no bfloat16 weights";
    }

    torch::manual_seed(8);
    auto fresh = make_pi_policy(lay);
    fresh->eval();
    EXPECT_FALSE(torch::equal(fresh->predict_action_chunk(batch, noise), expected)) << "fresh policy already agrees";
    // Strict: an unexpected key is refused.
    TensorMap extra = loaded;
    extra["model.not_a_parameter"] = torch::zeros({1});
    EXPECT_ANY_THROW(fresh->load_state_dict(extra, file.string()));
    fresh->load_state_dict(loaded, file.string());
    for (const auto& [name, t] : fresh->state_dict()) EXPECT_EQ(t.scalar_type(), state.at(name).scalar_type()) << name;
    const auto got = fresh->predict_action_chunk(batch, noise);
    EXPECT_EQ(got.scalar_type(), expected.scalar_type());
    EXPECT_TRUE(torch::equal(got, expected)) << layout << ": max diff " << (got - expected).abs().max().item<double>();
    std::cout << "[ round trip ] " << layout << ": " << state.size() << " tensors, " << dtypes.size()
              << " dtypes, chunk " << expected.sizes() << " bit-identical: " << torch::equal(got, expected) << "\n";
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace lerobot
