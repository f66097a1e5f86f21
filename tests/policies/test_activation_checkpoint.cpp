// Activation checkpointing over the policies' units (ActivationCheckpointRunner, what
// --accelerator.activation_checkpointing.mode=full installs) and Diffusion's own
// --policy.gradient_checkpointing: for ACT (dropout on), Diffusion, VQ-BeT (dropout on), a tiny
// SmolVLA and a tiny π0.5, a training forward whose units are recomputed in backward gives the plain
// run's loss and every gradient (1e-6 relative) and holds less heap after the forward. Negative
// control: with the RNG state not preserved, ACT's recomputed dropout masks differ and so do its
// gradients. And every policy's declared units: each prefix names parameters, no parameter is in
// two units, and the forward runs exactly the declared modules, in the declared order.
// The autocast setters of the version shim (before anything else includes it).
#define LEROBOT_AUTOCAST_COMPAT
#include "lerobot/common/torch_compat.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/activation_checkpoint.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/policy_units.h"
#include "lerobot/policies/smolvla/modeling_smolvla.h"
#include "lerobot/policies/vlm/text_tokenizer.h"
#include "lerobot/policies/vqbet/modeling_vqbet.h"
#include "pi_test_helpers.h"
#include "policy_test_helpers.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::reference_formula;

// ---------------------------------------------------------------------------------------------
// The tiny policies, each with the training forward the comparison runs

struct Case {
  std::string name;
  std::function<std::shared_ptr<Policy>()> make;  // the same weights on every call
  std::function<PolicyOutput(Policy&)> forward;
};

Json read_json(const std::string& file) {
  std::ifstream in(std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/" + file);
  return Json::parse(in);
}


Case act_case() {
  auto cfg = testing::small_act_config(1, 32);
  cfg.n_encoder_layers = 4;
  cfg.n_decoder_layers = 1;  // LeRobot's default; more reads the encoder's output twice per unit (see below)
  EXPECT_GT(cfg.dropout, 0.0);  // the recomputation must replay the dropout masks
  const Batch batch = testing::random_act_batch(cfg, 8, 1);
  return {"act",
          [cfg] {
            torch::manual_seed(0);
            return std::make_shared<ACTPolicy>(cfg, false);
          },
          [batch](Policy& p) { return p.forward(batch); }};
}

Case diffusion_case(bool own_checkpointing = false) {
  auto cfg = testing::small_diffusion_config();
  cfg.gradient_checkpointing = own_checkpointing;
  const Batch batch = testing::random_diffusion_batch(cfg, 8, 1);
  return {own_checkpointing ? "diffusion (policy.gradient_checkpointing)" : "diffusion",
          [cfg] {
            torch::manual_seed(0);
            return std::make_shared<DiffusionPolicy>(cfg, false);
          },
          [batch](Policy& p) { return p.forward(batch); }};
}

// tests/policies/data/vqbet_reference.json's sizes, with dropout on, in phase 2 (the GPT runs).
Case vqbet_case() {
  const Json r = read_json("vqbet_reference.json");
  const Json& c = r["config"];
  VQBeTConfig cfg;
  cfg.n_obs_steps = c["n_obs_steps"];
  cfg.n_action_pred_token = c["n_action_pred_token"];
  cfg.action_chunk_size = c["action_chunk_size"];
  cfg.crop_shape = c["crop_shape"].get<std::vector<int64_t>>();
  cfg.crop_is_random = false;
  cfg.pretrained_backbone_weights = std::nullopt;
  cfg.vqvae_n_embed = c["vqvae_n_embed"];
  cfg.vqvae_embedding_dim = c["vqvae_embedding_dim"];
  cfg.vqvae_enc_hidden_dim = c["vqvae_enc_hidden_dim"];
  cfg.gpt_block_size = c["gpt_block_size"];
  cfg.gpt_input_dim = c["gpt_input_dim"];
  cfg.gpt_output_dim = c["gpt_output_dim"];
  cfg.gpt_n_layer = 4;
  cfg.gpt_n_head = c["gpt_n_head"];
  cfg.gpt_hidden_dim = c["gpt_hidden_dim"];
  cfg.dropout = 0.1;
  const int64_t S = r["state_dim"], A = r["action_dim"], n = cfg.n_obs_steps, B = 4;
  const auto img = r["image_shape"].get<std::vector<int64_t>>();
  cfg.input_features["observation.image"] = {"VISUAL", img};
  cfg.input_features["observation.state"] = {"STATE", {S}};
  cfg.output_features["action"] = {"ACTION", {A}};
  cfg.input_feature_order = {"observation.image", "observation.state"};
  const int64_t L = n + cfg.n_action_pred_token + cfg.action_chunk_size - 2;
  Batch b;
  b["observation.state"] = reference_formula(B * n * S, 101, 1.0).view({B, n, S});
  b["observation.image"] = (reference_formula(B * n * img[0] * img[1] * img[2], 102, 1.0) * 0.5 + 0.5).view({B, n, img[0], img[1], img[2]});
  b["action"] = reference_formula(B * L * A, 103, 1.0).view({B, L, A});
  b["action_is_pad"] = torch::zeros({B, L}, torch::kBool);
  return {"vqbet",
          [cfg] {
            torch::manual_seed(0);
            auto policy = std::make_shared<VQBeTPolicy>(cfg, false);
            // Phase 2, as a checkpoint past n_vqvae_training_steps loads it.
            auto sd = policy->state_dict();
            TensorMap copy;
            for (auto& [name, t] : sd) copy[name] = t.clone();
            copy.at("vqbet.action_head.vqvae_model.discretized").fill_(true);
            copy.at("vqbet.action_head.vqvae_model.vq_layer.freeze_codebook").fill_(true);
            policy->load_state_dict(copy, "test");
            return policy;
          },
          [b](Policy& p) { return p.forward(b); }};
}

// tests/policies/data/smolvla_reference.json's "default" layout on the tiny SmolVLM folder
// (VLM and vision tower frozen, as LeRobot's defaults: the joint layers train through the expert).
Case smolvla_case() {
  const Json r = read_json("smolvla_reference.json");
  const Json& v = r["variants"]["default"];
  const std::string vlm = std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_tiny_vlm";
  SmolVLAConfig cfg;
  Json j = v["config"];
  j.erase("device");
  j["vlm_model_name"] = vlm;
  apply_json(cfg, j, "test");
  for (const auto& [key, shape] : r["cameras"].items()) cfg.input_features[key] = {"VISUAL", shape.get<std::vector<int64_t>>()};
  cfg.input_features["observation.state"] = {"STATE", {v["state_dim"].get<int64_t>()}};
  cfg.output_features["action"] = {"ACTION", {v["action_dim"].get<int64_t>()}};
  cfg.input_feature_order = {"observation.images.top", "observation.images.wrist", "observation.state"};
  const int64_t b = r["batch"], m = v["config"]["max_action_dim"];
  Batch batch;
  int64_t k = 200;
  for (const auto& [key, shape] : r["cameras"].items()) {
    auto s = shape.get<std::vector<int64_t>>();
    s.insert(s.begin(), b);
    int64_t n = 1;
    for (auto d : s) n *= d;
    batch[key] = 0.5 + 0.5 * reference_formula(n, k++, 1.0).view(s);
  }
  batch["observation.state"] = reference_formula(b * v["state_dim"].get<int64_t>(), 210, 1.0).view({b, -1});
  batch["action"] = reference_formula(b * 5 * v["action_dim"].get<int64_t>(), 211, 1.0).view({b, 5, -1});
  batch["action_is_pad"] = torch::zeros({b, 5}, torch::kBool);
  std::vector<torch::Tensor> rows, masks;
  const auto tokens = v["tokens"].get<std::vector<std::vector<int64_t>>>();
  const auto mask = v["token_mask"].get<std::vector<std::vector<bool>>>();
  for (size_t i = 0; i < tokens.size(); ++i) {
    rows.push_back(torch::tensor(tokens[i]));
    masks.push_back(torch::tensor(std::vector<int64_t>(mask[i].begin(), mask[i].end())).to(torch::kBool));
  }
  batch[kLanguageTokens] = torch::stack(rows);
  batch[kLanguageMask] = torch::stack(masks);
  const auto noise = reference_formula(b * 5 * m, 220, 1.0).view({b, 5, m});
  const auto time = torch::tensor({0.3f, 0.8f});
  return {"smolvla",
          [cfg, vlm] {
            auto policy = std::make_shared<SmolVLAPolicy>(cfg, vlm);
            torch::NoGradGuard no_grad;
            int64_t n = 0;
            for (auto& [name, t] : policy->state_dict())
              if (t.is_floating_point()) t.copy_(reference_formula(t.numel(), n++, 0.05).view(t.sizes()));
            return policy;
          },
          [batch, noise, time](Policy& p) { return static_cast<SmolVLAPolicy&>(p).forward(batch, noise, time); }};
}

// The π0.5 reference layout (tests/policies/data/pi_reference.json), everything training; with
// `own_checkpointing` its config's gradient_checkpointing is on too (the runner goes around it).
Case pi05_case(bool own_checkpointing = false) {
  const Json tiny = read_json("pi_reference.json")["layouts"]["pi05"]["config"]["tiny"];
  return {own_checkpointing ? "pi05 (+ policy.gradient_checkpointing)" : "pi05",
          [tiny, own_checkpointing] {
            std::shared_ptr<PiPolicy> p = testing::make_pi_policy(
                "pi05", tiny, [&](PiConfigBase& c) { c.gradient_checkpointing = own_checkpointing; });
            testing::pi_fill(*p);
            return p;
          },
          [tiny](Policy& p) {
            return static_cast<PiPolicy&>(p).forward(testing::pi_batch(tiny), testing::pi_noise(tiny),
                                                     testing::pi_flow_time(tiny));
          }};
}

// ---------------------------------------------------------------------------------------------
// One measured training forward and backward

// glibc's bytes in use: small blocks in every arena plus mmapped blocks (LibTorch's CPU tensors).
int64_t heap_bytes() {
  const auto m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

struct TrainRun {
  double loss = 0;
  std::map<std::string, torch::Tensor> grads;  // undefined where the parameter got none
  int64_t held = 0;                            // heap bytes held after the forward, before backward
};

// Two training forwards and backwards from torch seed 1234 (no optimizer step between), under
// `runner` (nullptr: none): the second one's heap held after the forward (one-time allocations
// are out by then), its loss and gradients.
TrainRun train_forward(Policy& policy, const Case& c, UnitRunner* runner) {
  policy.train();
  TrainRun r;
  for (int step = 0; step < 2; ++step) {
    for (auto& p : policy.parameters()) p.mutable_grad() = torch::Tensor();
    torch::manual_seed(1234);
    PolicyOutput out;
    const int64_t before = heap_bytes();
    {
      UnitRunnerScope scope(runner);
      out = c.forward(policy);
    }
    r.held = heap_bytes() - before;
    out.loss.backward();
    r.loss = out.loss.item<double>();
  }
  for (const auto& p : policy.named_parameters(true))
    r.grads[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : torch::Tensor();
  return r;
}

// Names whose gradients differ: ‖a − b‖ > rtol · ‖b‖ (+1e-30), or defined on one side only.
// Not bitwise in general, for two reasons. Where a unit reads an input twice and other units read
// it too (four ACT decoder layers each read the encoder's output as keys and as values), the
// recomputation sums a unit's two contributions before they join the others', the plain backward
// one by one (seen: 8e-7 in norm on a backbone weight). And the first run is made without
// gradients, where a kernel may take its inference variant (Diffusion's convolutions: the loss's
// gradient starts from outputs that differ in the last bits; seen: 4.6e-7 in norm).
std::vector<std::string> gradient_mismatches(const TrainRun& a, const TrainRun& b, double rtol, double* worst) {
  std::vector<std::string> bad;
  *worst = 0;
  for (const auto& [name, gb] : b.grads) {
    const auto it = a.grads.find(name);
    if (it == a.grads.end() || it->second.defined() != gb.defined()) {
      bad.push_back(name + " (gradient present on one side only)");
      continue;
    }
    if (!gb.defined()) continue;
    const double diff = (it->second.to(torch::kDouble) - gb.to(torch::kDouble)).norm().item<double>();
    const double scale = gb.to(torch::kDouble).norm().item<double>() + 1e-30;
    if (diff / scale > *worst && std::getenv("LEROBOT_TEST_VERBOSE")) std::cout << "  worst so far: " << name << " " << diff / scale << "\n";
    *worst = std::max(*worst, diff / scale);
    if (diff > rtol * scale) bad.push_back(name + " (difference norm " + std::to_string(diff) + " of " + std::to_string(scale) + ")");
  }
  if (a.grads.size() != b.grads.size()) bad.push_back("parameter count");
  return bad;
}

int64_t with_gradient(const TrainRun& r) {
  int64_t n = 0;
  for (const auto& [name, g] : r.grads) n += g.defined();
  return n;
}

// `less_memory`: the checkpointed run must hold less heap after the forward (not so when the policy
// already recomputes the same layers itself).
void expect_same_as_plain(const TrainRun& plain, const TrainRun& ckpt, const std::string& what, bool less_memory = true) {
  EXPECT_NEAR(ckpt.loss, plain.loss, 1e-6 * std::abs(plain.loss)) << what << ": loss";
  double worst = 0;
  for (const auto& b : gradient_mismatches(ckpt, plain, 1e-6, &worst)) ADD_FAILURE() << what << ": " << b;
  EXPECT_GT(with_gradient(plain), 0) << what;
  EXPECT_GT(plain.held, 0) << what;
  if (less_memory) {
    EXPECT_LT(ckpt.held, plain.held) << what << ": no less activation memory held after the forward";
  }
  std::cout << "[ checkpoint ] " << what << ": loss " << plain.loss << " / " << ckpt.loss << ", "
            << with_gradient(plain) << " gradients, worst relative difference " << worst
            << "; held after forward " << plain.held << " bytes plain, " << ckpt.held << " checkpointed (ratio "
            << static_cast<double>(ckpt.held) / static_cast<double>(plain.held) << ")\n";
}

// ---------------------------------------------------------------------------------------------
// The runner against the plain run, per policy

class CheckpointRunner : public ::testing::TestWithParam<std::string> {};

Case case_named(const std::string& name) {
  if (name == "act") return act_case();
  if (name == "diffusion") return diffusion_case();
  if (name == "vqbet") return vqbet_case();
  if (name == "smolvla") return smolvla_case();
  if (name == "pi05_own") return pi05_case(true);
  return pi05_case();
}

TEST_P(CheckpointRunner, SameLossAndEveryGradientWithLessMemoryHeld) {
  const Case c = case_named(GetParam());
  auto plain_policy = c.make();
  const TrainRun plain = train_forward(*plain_policy, c, nullptr);
  auto policy = c.make();
  ActivationCheckpointRunner runner(*policy);
  const TrainRun ckpt = train_forward(*policy, c, &runner);
  EXPECT_GT(runner.recomputed_runs(), 0) << "no unit was checkpointed";
  // π with its own gradient_checkpointing: the runner goes around layers π recomputes already
  // (nothing more to save, and no second recomputation); what counts there is the gradients.
  expect_same_as_plain(plain, ckpt, c.name, GetParam() != "pi05_own");
}

INSTANTIATE_TEST_SUITE_P(Policies, CheckpointRunner,
                         ::testing::Values("act", "diffusion", "vqbet", "smolvla", "pi05", "pi05_own"));

// Each unit of ACT is checkpointed once per forward (two forwards), frozen or not.
TEST(CheckpointRunnerAct, EveryActUnitIsCheckpointedOncePerForward) {
  const Case c = act_case();
  auto policy = c.make();
  ActivationCheckpointRunner runner(*policy);
  train_forward(*policy, c, &runner);
  EXPECT_EQ(runner.recomputed_runs(), 2 * static_cast<int64_t>(policy->units().size()));
}

// Without the RNG state replayed, ACT's recomputed dropout masks are new draws: the loss is the
// same (the first run is unchanged) but the gradients are not. This is what the comparison above
// would catch.
TEST(CheckpointRunnerAct, WithoutRngPreservationActsGradientsDiffer) {
  const Case c = act_case();
  auto plain_policy = c.make();
  const TrainRun plain = train_forward(*plain_policy, c, nullptr);
  auto policy = c.make();
  ActivationCheckpointRunner runner(*policy, /*preserve_rng_state=*/false);
  const TrainRun ckpt = train_forward(*policy, c, &runner);
  EXPECT_NEAR(ckpt.loss, plain.loss, 1e-6 * std::abs(plain.loss));
  double worst = 0;
  const auto bad = gradient_mismatches(ckpt, plain, 1e-6, &worst);
  EXPECT_FALSE(bad.empty()) << "dropout drawn anew in the recomputation went unnoticed";
  std::cout << "[ no rng     ] act: " << bad.size() << " gradients differ, worst relative difference " << worst << "\n";
}

// The forward under CPU bfloat16 autocast (as --accelerator.mixed_precision=bf16 runs it): the
// backward runs outside autocast, so the recomputation must set the first run's autocast state
// again, or it computes in float32 and its gradients are not those of the bfloat16 forward.
TEST(CheckpointRunnerAct, UnderBf16AutocastTheRecomputationCastsAsTheFirstRun) {
  Case c = act_case();
  auto cfg = testing::small_act_config(1, 32);
  cfg.n_decoder_layers = 1;  // no input read twice inside one unit and once more outside: same sums
  const Batch batch = testing::random_act_batch(cfg, 8, 1);
  c.make = [cfg] {
    torch::manual_seed(0);
    return std::make_shared<ACTPolicy>(cfg, false);
  };
  c.forward = [batch](Policy& p) {
    at::autocast::increment_nesting();
    compat::set_autocast(/*cuda=*/false, true, at::kBFloat16);
    PolicyOutput out;
    try {
      out = p.forward(batch);
    } catch (...) {
      compat::set_autocast(false, false, at::kBFloat16);
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      throw;
    }
    compat::set_autocast(false, false, at::kBFloat16);
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    return out;
  };
  auto plain_policy = c.make();
  const TrainRun plain = train_forward(*plain_policy, c, nullptr);
  auto policy = c.make();
  ActivationCheckpointRunner runner(*policy);
  const TrainRun ckpt = train_forward(*policy, c, &runner);
  EXPECT_FALSE(compat::autocast_enabled(false)) << "autocast left on";
  expect_same_as_plain(plain, ckpt, "act under bf16 autocast");
}

// Diffusion's own --policy.gradient_checkpointing=true (LeRobot's checkpoint() of every U-Net
// residual block in training), no runner.
TEST(DiffusionGradientCheckpointing, SameLossAndEveryGradientWithLessMemoryHeld) {
  const Case plain_case = diffusion_case(false), own = diffusion_case(true);
  auto a = plain_case.make();
  const TrainRun plain = train_forward(*a, plain_case, nullptr);
  auto b = own.make();
  const TrainRun ckpt = train_forward(*b, own, nullptr);
  expect_same_as_plain(plain, ckpt, own.name);
}

// ---------------------------------------------------------------------------------------------
// The declared units

// Records the modules the forward runs through run_unit, in order.
class RecordingRunner : public UnitRunner {
 public:
  std::vector<const torch::nn::Module*> seen;
  std::vector<torch::Tensor> run(torch::nn::Module& unit, const std::vector<torch::Tensor>& inputs,
                                 const UnitFn& fn) override {
    seen.push_back(&unit);
    return fn(inputs);
  }
};

class PolicyUnits : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyUnits, CoverRealParametersOnceAndAreWhatTheForwardRuns) {
  const Case c = case_named(GetParam());
  auto policy = c.make();
  const auto units = policy->units();
  ASSERT_FALSE(units.empty());
  for (const auto& p : unit_problems(*policy, units)) ADD_FAILURE() << p;
  int64_t in_units = 0;
  for (const auto& u : units) in_units += static_cast<int64_t>(unit_parameters(*policy, u).size());
  EXPECT_GT(in_units, 0);

  RecordingRunner rec;
  policy->train();
  {
    UnitRunnerScope scope(&rec);
    c.forward(*policy);
  }
  // The modules in the order of their first run are the declared units, in order.
  std::vector<const torch::nn::Module*> first_runs;
  std::set<const torch::nn::Module*> distinct;
  for (const auto* m : rec.seen)
    if (distinct.insert(m).second) first_runs.push_back(m);
  std::vector<const torch::nn::Module*> declared;
  for (const auto& u : units) declared.push_back(u.module);
  EXPECT_EQ(first_runs, declared) << units.size() << " declared, " << first_runs.size() << " run";
  std::cout << "[ units      ] " << c.name << ": " << units.size() << " units (" << units.front().class_name << " … "
            << units.back().class_name << "), " << in_units << " parameters in them, " << rec.seen.size()
            << " unit runs per forward\n";
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyUnits, ::testing::Values("act", "diffusion", "vqbet", "smolvla", "pi05"));

// π's own checkpointing recomputes the whole vision tower in backward; its SigLIP layers are units,
// so the recomputation runs them through the runner of the forward again (sharding gathers their
// parameters then), though the backward runs outside the forward's UnitRunnerScope.
TEST(PolicyUnitChecks, ARecomputationRunsItsUnitsThroughTheForwardsRunnerAgain) {
  const Case c = pi05_case(true);
  auto policy = c.make();
  policy->train();
  std::set<const torch::nn::Module*> siglip;
  for (const auto& u : policy->units())
    if (u.class_name == "SiglipEncoderLayer") siglip.insert(u.module);
  RecordingRunner rec;
  PolicyOutput out;
  {
    UnitRunnerScope scope(&rec);
    out = c.forward(*policy);
  }
  const std::vector<const torch::nn::Module*> forward_runs = rec.seen;
  out.loss.backward();
  std::vector<const torch::nn::Module*> forward_siglip, again;
  for (const auto* m : forward_runs)
    if (siglip.count(m)) forward_siglip.push_back(m);
  again.assign(rec.seen.begin() + static_cast<std::ptrdiff_t>(forward_runs.size()), rec.seen.end());
  ASSERT_FALSE(forward_siglip.empty());
  EXPECT_EQ(again, forward_siglip) << "the vision tower's recomputation did not run its layers through the runner";
  EXPECT_EQ(current_unit_runner(), nullptr);
}

TEST(PolicyUnitChecks, ClassNamesAreLeRobots) {
  auto act = act_case().make();
  std::map<std::string, int> act_names;
  for (const auto& u : act->units()) ++act_names[u.class_name];
  EXPECT_EQ(act_names, (std::map<std::string, int>{{"ACTEncoderLayer", 2 + 4}, {"ACTDecoderLayer", 1}}));
  for (const auto& u : diffusion_case().make()->units()) EXPECT_EQ(u.class_name, "DiffusionConditionalResidualBlock1d");
  for (const auto& u : vqbet_case().make()->units()) EXPECT_EQ(u.class_name, "Block");
  const auto pi = pi05_case().make()->units();
  EXPECT_EQ(pi.front().class_name, "SiglipEncoderLayer");
  EXPECT_EQ(pi.back().class_name, "PiJointLayer");
  EXPECT_EQ(pi.back().prefixes.size(), 2u) << "a joint layer is PaliGemma's layer and the expert's";
}

// --accelerator.activation_checkpointing.mode: none gives no runner, full one, and a policy without
// units or another mode is a usage error naming the flag.
TEST(PolicyUnitChecks, TheModeFlagGivesTheRunnerOrAnErrorNamingIt) {
  struct UnitlessAct : ACTPolicy {
    using ACTPolicy::ACTPolicy;
    std::vector<PolicyUnit> units() override { return {}; }
  };
  auto act = act_case().make();
  EXPECT_EQ(activation_checkpointing_runner(*act, "none", "act"), nullptr);
  EXPECT_NE(dynamic_cast<ActivationCheckpointRunner*>(activation_checkpointing_runner(*act, "full", "act").get()), nullptr);
  UnitlessAct unitless(testing::small_act_config(1, 32), false);
  for (const auto& [policy, mode] : std::vector<std::pair<Policy*, std::string>>{{&unitless, "full"}, {act.get(), "selective"}}) {
    try {
      activation_checkpointing_runner(*policy, mode, "act");
      ADD_FAILURE() << mode << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find("accelerator.activation_checkpointing.mode"), std::string::npos) << e.what();
    }
  }
}

// The check itself fails on bad declarations.
TEST(PolicyUnitChecks, ProblemsAreFound) {
  auto policy = act_case().make();
  auto units = policy->units();
  ASSERT_GE(units.size(), 2u);
  auto twice = units;
  twice[1].prefixes.push_back(twice[0].prefixes[0]);
  EXPECT_FALSE(unit_problems(*policy, twice).empty());
  auto nothing = units;
  nothing[0].prefixes = {"model.no_such_module."};
  EXPECT_FALSE(unit_problems(*policy, nothing).empty());
  EXPECT_TRUE(unit_problems(*policy, units).empty());
}

}  // namespace
}  // namespace lerobot
