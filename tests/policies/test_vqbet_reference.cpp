// VQ-BeT against Python LeRobot 0.6.2 itself: tests/policies/data/vqbet_reference.json was written
// by scripts/python_lerobot/vqbet_reference.py, which builds LeRobot's VQBeTPolicy, fills every
// weight from a formula (computed here the same way, so no weights file is kept) and records its
// state-dict layout, optimizer groups, both training phases and a rollout. The code sampling runs
// at temperature 1e-4, so torch.multinomial picks the most likely code on both sides.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#define LEROBOT_AUTOCAST_COMPAT
#include "lerobot/common/torch_compat.h"
#include "lerobot/common/config/json.h"
#include "policy_test_helpers.h"
#include "lerobot/policies/vqbet/modeling_vqbet.h"

namespace lerobot {
namespace {

const Json& vqbet_reference() {
  static const Json j = [] {
    std::ifstream in(std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/vqbet_reference.json");
    return Json::parse(in);
  }();
  return j;
}

// The script's formula (policy_test_helpers.h).
torch::Tensor vqbet_formula(int64_t n, int64_t k, double scale) { return testing::reference_formula(n, k, scale); }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

VQBeTConfig reference_config() {
  const auto& r = vqbet_reference();
  const auto& c = r["config"];
  VQBeTConfig cfg;
  cfg.n_obs_steps = c["n_obs_steps"];
  cfg.n_action_pred_token = c["n_action_pred_token"];
  cfg.action_chunk_size = c["action_chunk_size"];
  cfg.crop_shape = c["crop_shape"].get<std::vector<int64_t>>();
  cfg.crop_is_random = c["crop_is_random"];
  cfg.pretrained_backbone_weights = std::nullopt;
  cfg.n_vqvae_training_steps = c["n_vqvae_training_steps"];
  cfg.vqvae_n_embed = c["vqvae_n_embed"];
  cfg.vqvae_embedding_dim = c["vqvae_embedding_dim"];
  cfg.vqvae_enc_hidden_dim = c["vqvae_enc_hidden_dim"];
  cfg.gpt_block_size = c["gpt_block_size"];
  cfg.gpt_input_dim = c["gpt_input_dim"];
  cfg.gpt_output_dim = c["gpt_output_dim"];
  cfg.gpt_n_layer = c["gpt_n_layer"];
  cfg.gpt_n_head = c["gpt_n_head"];
  cfg.gpt_hidden_dim = c["gpt_hidden_dim"];
  cfg.dropout = c["dropout"];
  cfg.offset_loss_weight = c["offset_loss_weight"];
  cfg.bet_softmax_temperature = c["bet_softmax_temperature"];
  cfg.input_features["observation.image"] = {"VISUAL", r["image_shape"].get<std::vector<int64_t>>()};
  cfg.input_features["observation.state"] = {"STATE", {r["state_dim"].get<int64_t>()}};
  cfg.output_features["action"] = {"ACTION", {r["action_dim"].get<int64_t>()}};
  cfg.input_feature_order = {"observation.image", "observation.state"};
  return cfg;
}

std::shared_ptr<VQBeTPolicy> make_policy(bool discretized) {
  auto policy = std::make_shared<VQBeTPolicy>(reference_config(), false);
  auto sd = policy->state_dict();
  torch::NoGradGuard no_grad;
  int64_t k = 0;
  for (auto& [name, t] : sd) {  // TensorMap is sorted by name, as the script's sorted(state_dict)
    const bool natural = ends_with(name, "running_mean") || ends_with(name, "running_var") ||
                         ends_with(name, "pos_grid") || ends_with(name, ".attn.bias") || ends_with(name, "initted") ||
                         ends_with(name, "cluster_size") || ends_with(name, "embed_avg");
    if (t.is_floating_point() && !natural) t.copy_(vqbet_formula(t.numel(), k, 0.1).view(t.sizes()));
    ++k;
  }
  for (auto& [name, t] : sd)
    if (ends_with(name, "embed_avg")) t.copy_(sd.at(name.substr(0, name.size() - 9) + "embed"));
  if (discretized) {
    // As the script sets the buffers, then loaded through load_state_dict like a checkpoint.
    sd.at("vqbet.action_head.vqvae_model.discretized").fill_(true);
    sd.at("vqbet.action_head.vqvae_model.vq_layer.freeze_codebook").fill_(true);
    TensorMap copy;
    for (auto& [name, t] : sd) copy[name] = t.clone();
    policy->load_state_dict(copy, "formula");
  }
  return policy;
}

Batch reference_inputs() {
  const auto& r = vqbet_reference();
  const auto& c = r["config"];
  const int64_t B = r["batch"], n = c["n_obs_steps"], S = r["state_dim"], A = r["action_dim"];
  const int64_t L = n + c["n_action_pred_token"].get<int64_t>() + c["action_chunk_size"].get<int64_t>() - 2;
  const auto img = r["image_shape"].get<std::vector<int64_t>>();
  Batch b;
  b["observation.state"] = vqbet_formula(B * n * S, 101, 1.0).view({B, n, S});
  b["observation.image"] = (vqbet_formula(B * n * img[0] * img[1] * img[2], 102, 1.0) * 0.5 + 0.5).view({B, n, img[0], img[1], img[2]});
  b["action"] = vqbet_formula(B * L * A, 103, 1.0).view({B, L, A});
  b["action_is_pad"] = torch::zeros({B, L}, torch::kBool);
  return b;
}

torch::Tensor json_tensor(const Json& j) { return torch::tensor(j.get<std::vector<double>>(), torch::kDouble); }

// |a - b| <= atol + rtol |b|, elementwise.
void expect_close(const torch::Tensor& actual, const Json& expected, double rtol, double atol, const std::string& what) {
  const auto a = actual.detach().to(torch::kDouble).reshape({-1});
  const auto e = json_tensor(expected);
  ASSERT_EQ(a.numel(), e.numel()) << what;
  const auto bad = ((a - e).abs() > (e.abs() * rtol + atol)).sum().item<int64_t>();
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << a.numel() << " differ; largest difference "
                    << (a - e).abs().max().item<double>();
}

void expect_close(double actual, double expected, double rtol, double atol, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), atol + rtol * std::abs(expected)) << what << ": " << actual << " vs " << expected;
}

TEST(VQBeTReference, StateDictNamesShapesAndDtypesAreLeRobots) {
  auto policy = make_policy(false);
  const auto sd = policy->state_dict();
  const auto& keys = vqbet_reference()["keys"];
  EXPECT_EQ(sd.size(), keys.size());
  for (const auto& [name, spec] : keys.items()) {
    auto it = sd.find(name);
    ASSERT_NE(it, sd.end()) << "missing key " << name;
    EXPECT_EQ(it->second.sizes().vec(), spec["shape"].get<std::vector<int64_t>>()) << name;
    const std::string dtype = spec["dtype"];
    const auto want = dtype == "float32" ? torch::kFloat : dtype == "int64" ? torch::kLong : dtype == "bool" ? torch::kBool : torch::kDouble;
    EXPECT_EQ(it->second.scalar_type(), want) << name << " is " << it->second.scalar_type() << ", LeRobot's " << dtype;
  }
}

TEST(VQBeTReference, OptimizerGroupsAreGetOptimParams) {
  auto policy = make_policy(false);
  const auto groups = policy->optim_param_groups();
  const auto& ref = vqbet_reference()["optim_groups"];
  ASSERT_EQ(groups.size(), ref.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(groups[g].names, ref[g]["names"].get<std::vector<std::string>>()) << "group " << g;
    EXPECT_EQ(groups[g].lr.has_value(), !ref[g]["lr"].is_null()) << "group " << g;
    if (groups[g].lr) {
      EXPECT_DOUBLE_EQ(*groups[g].lr, ref[g]["lr"].get<double>());
    }
    EXPECT_EQ(groups[g].weight_decay.has_value(), !ref[g]["weight_decay"].is_null()) << "group " << g;
    if (groups[g].weight_decay) {
      EXPECT_DOUBLE_EQ(*groups[g].weight_decay, ref[g]["weight_decay"].get<double>());
    }
  }
}

TEST(VQBeTReference, PhaseOneTrainsTheVqVaeAndUpdatesTheCodebooksAsLeRobot) {
  auto policy = make_policy(false);
  policy->train();
  auto out = policy->forward(reference_inputs());
  out.loss.backward();
  const auto& r = vqbet_reference()["phase1"];
  expect_close(out.loss.item<double>(), r["loss"], 1e-4, 1e-6, "phase-1 loss");
  for (const auto& [k, v] : r["values"].items()) {
    ASSERT_TRUE(out.values.count(k)) << "no logged value " << k;
    expect_close(out.values.at(k).item<double>(), v.get<double>(), 1e-4, 1e-6, k);
  }
  auto& vq = *policy->vqbet->action_head->vqvae_model;
  expect_close(vq.encoder[0]->as<torch::nn::Linear>()->weight.grad().sum().item<double>(), r["encoder0_weight_grad_sum"],
               1e-3, 1e-6, "encoder.0.weight grad sum");
  expect_close(vq.decoder[4]->as<torch::nn::Linear>()->bias.grad(), r["decoder4_bias_grad"], 1e-4, 1e-6, "decoder.4.bias grad");
  const auto sd = policy->state_dict();
  for (int q = 0; q < 2; ++q) {
    const std::string p = "vqbet.action_head.vqvae_model.vq_layer.layers." + std::to_string(q) + "._codebook.";
    // Unused codes are divided by ~1e-5 (LeRobot's Laplace smoothing of a zero count): relative tolerance.
    expect_close(sd.at(p + "embed"), r["embed"][q], 1e-4, 1e-5, p + "embed");
    expect_close(sd.at(p + "cluster_size"), r["cluster_size"][q], 1e-6, 1e-7, p + "cluster_size");
  }
  EXPECT_EQ(policy->discretized(), r["discretized_after"].get<bool>());
  // The second training forward ends phase 1 (n_vqvae_training_steps = 2), as LeRobot's counter.
  policy->forward(reference_inputs());
  EXPECT_TRUE(policy->discretized());
  EXPECT_TRUE(sd.at("vqbet.action_head.vqvae_model.discretized").item<bool>());
  EXPECT_TRUE(sd.at("vqbet.action_head.vqvae_model.vq_layer.freeze_codebook").item<bool>());
}

TEST(VQBeTReference, PhaseTwoLossAndGradientsAreLeRobots) {
  auto policy = make_policy(true);
  ASSERT_TRUE(policy->discretized()) << "load_state_dict reads the discretized buffer";
  policy->train();
  const auto before = policy->state_dict().at("vqbet.action_head.vqvae_model.vq_layer.layers.0._codebook.embed").clone();
  auto out = policy->forward(reference_inputs());
  out.loss.backward();
  const auto& r = vqbet_reference()["phase2"];
  expect_close(out.loss.item<double>(), r["loss"], 1e-4, 1e-5, "phase-2 loss");
  for (const auto& [k, v] : r["values"].items()) {
    ASSERT_TRUE(out.values.count(k)) << "no logged value " << k;
    expect_close(out.values.at(k).item<double>(), v.get<double>(), 1e-4, 1e-5, k);
  }
  auto& m = *policy->vqbet;
  expect_close(m.action_token.grad(), r["action_token_grad"], 1e-3, 1e-7, "action_token grad");
  expect_close(m.action_head->map_to_cbet_preds_bin[0]->as<torch::nn::Linear>()->bias.grad(), r["bin_bias_grad"], 1e-4,
               1e-6, "map_to_cbet_preds_bin.0.bias grad");
  expect_close(m.rgb_encoder->out->bias.grad(), r["rgb_out_bias_grad"], 1e-2, 1e-9, "rgb_encoder.out.bias grad");
  // wte's gradient sums to almost nothing (2e-9 against an absolute sum of 0.31): its signed sum
  // is rounding noise, which differs between LibTorch builds (3.5e-9 on 2.11), so it is held to
  // the gradient's scale, and the absolute sum is compared as a value.
  const auto wte_grad = m.policy->transformer->wte->weight.grad();
  const double wte_abs = r["wte_weight_grad_abs_sum"].get<double>();
  expect_close(wte_grad.abs().sum().item<double>(), wte_abs, 1e-3, 1e-7, "wte.weight grad abs sum");
  expect_close(wte_grad.sum().item<double>(), r["wte_weight_grad_sum"], 0, 1e-6 * wte_abs, "wte.weight grad sum");
  EXPECT_FALSE(m.action_head->vqvae_model->encoder[0]->as<torch::nn::Linear>()->weight.grad().defined())
      << "the frozen VQ-VAE gets no gradient in phase 2";
  EXPECT_TRUE(torch::equal(before, policy->state_dict().at("vqbet.action_head.vqvae_model.vq_layer.layers.0._codebook.embed")))
      << "frozen codebooks do not move";
}

TEST(VQBeTReference, RolloutActionsAreLeRobots) {
  auto policy = make_policy(true);
  policy->reset();
  const auto batch = reference_inputs();
  const auto& r = vqbet_reference()["rollout_actions"];
  const int64_t n = vqbet_reference()["config"]["n_obs_steps"];
  for (size_t t = 0; t < r.size(); ++t) {
    const int64_t s = static_cast<int64_t>(t) % n;
    Batch obs;
    obs["observation.state"] = batch.at("observation.state").select(1, s) * (1 + 0.1 * static_cast<double>(t));
    obs["observation.image"] = batch.at("observation.image").select(1, s);
    expect_close(policy->select_action(obs), r[t], 1e-4, 1e-6, "action " + std::to_string(t));
  }
}

// A run that ends inside phase 1 would save a policy whose GPT never trained: the trainer warns.
TEST(VQBeTConfig, ARunEndingInsidePhaseOneIsWarnedAbout) {
  VQBeTConfig c;  // LeRobot's 20000 VQ-VAE steps
  const auto w = c.training_length_warning(10000);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("--policy.n_vqvae_training_steps=20000"), std::string::npos) << *w;
  EXPECT_TRUE(c.training_length_warning(20000).has_value()) << "the last step is still a VQ-VAE step";
  EXPECT_FALSE(c.training_length_warning(20001).has_value());
}

// Mixed precision leaves the codebooks in float32, as LeRobot's autocast(enabled=False) does: the
// nearest codes and the EMA statistics are those of the float32 pass. (Without the guard the
// bfloat16 matmuls reach the float32 EMA buffers and the update throws.)
TEST(VQBeTReference, TheCodebooksRunInFloat32UnderAutocast) {
  torch::manual_seed(3);
  ResidualVQ reference(8, 2, 4), mixed(8, 2, 4);
  {
    torch::NoGradGuard no_grad;
    for (auto& item : mixed->named_buffers()) item.value().copy_(reference->named_buffers()[item.key()]);
  }
  const auto x = torch::randn({16, 1, 8});
  const auto a = reference->forward(x);
  compat::set_autocast(/*cuda=*/false, true, at::kBFloat16);
  const auto b = mixed->forward(x);
  compat::set_autocast(false, false, at::kFloat);
  EXPECT_EQ(b.quantized.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(a.indices, b.indices));
  for (auto& item : reference->named_buffers())
    EXPECT_TRUE(torch::equal(item.value(), mixed->named_buffers()[item.key()])) << item.key() << " differs under autocast";
}

}  // namespace
}  // namespace lerobot
