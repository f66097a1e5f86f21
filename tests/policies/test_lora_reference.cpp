// LoRA (LeRobot 0.6.2's --peft.*, PEFT's LoraModel) on the tiny formula-filled SmolVLA of
// test_smolvla_reference.cpp, against tests/policies/data/smolvla_lora/ written by
// scripts/python_lerobot/smolvla_lora_reference.py with LeRobot + PEFT 0.20.1.dev0: the modules
// SmolVLA's default targets pick, PEFT's names and shapes, its initialisation, loss, gradients and
// action chunk with formula-filled adapters, the adapter folder both ways, and training that moves
// only the adapters.
#include <gtest/gtest.h>

#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/lora/peft_adapter_io.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/smolvla/modeling_smolvla.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

std::string data(const std::string& rel) { return std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/" + rel; }

const Json& load_json(const std::string& rel) {
  static std::map<std::string, Json> cache;
  auto it = cache.find(rel);
  if (it == cache.end()) {
    std::ifstream in(data(rel));
    it = cache.emplace(rel, Json::parse(in)).first;
  }
  return it->second;
}
const Json& lora_ref() { return load_json("smolvla_lora/reference.json"); }
const Json& base_ref() { return load_json("smolvla_reference.json"); }

torch::Tensor t(int64_t k, std::vector<int64_t> shape, double scale = 1.0) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return testing::reference_formula(n, k, scale).view(shape);
}

// The "default" variant of smolvla_reference.py, weights from its formula.
std::shared_ptr<SmolVLAPolicy> make_policy() {
  const auto& r = base_ref();
  SmolVLAConfig cfg;
  Json j = r["variants"]["default"]["config"];
  j.erase("device");
  j["vlm_model_name"] = data("smolvla_tiny_vlm");
  apply_json(cfg, j, "reference");
  for (const auto& [key, shape] : r["cameras"].items()) cfg.input_features[key] = {"VISUAL", shape.get<std::vector<int64_t>>()};
  cfg.input_features["observation.state"] = {"STATE", {r["state_dim"].get<int64_t>()}};
  cfg.output_features["action"] = {"ACTION", {r["action_dim"].get<int64_t>()}};
  cfg.input_feature_order = {"observation.images.top", "observation.images.wrist", "observation.state"};
  auto policy = std::make_shared<SmolVLAPolicy>(cfg, data("smolvla_tiny_vlm"));
  auto sd = policy->state_dict();
  torch::NoGradGuard ng;
  int64_t k = 0;
  for (auto& [name, x] : sd) {
    if (x.is_floating_point()) x.copy_(testing::reference_formula(x.numel(), k, r["fill_scale"].get<double>()).view(x.sizes()));
    ++k;
  }
  return policy;
}

Batch inputs() {
  const auto& r = base_ref();
  const auto& v = r["variants"]["default"];
  const int64_t b = r["batch"];
  Batch batch;
  int64_t i = 0;
  for (const auto& key : {"observation.images.top", "observation.images.wrist"}) {
    auto shape = r["cameras"][key].get<std::vector<int64_t>>();
    shape.insert(shape.begin(), b);
    batch[key] = 0.5 + 0.5 * t(200 + i++, shape);
  }
  batch["observation.state"] = t(210, {b, r["state_dim"].get<int64_t>()});
  batch["action"] = t(211, {b, 5, r["action_dim"].get<int64_t>()});
  auto pad = torch::zeros({b, 5}, torch::kBool);
  pad.index_put_({1, torch::indexing::Slice(3, torch::indexing::None)}, true);
  batch["action_is_pad"] = pad;
  std::vector<torch::Tensor> rows, masks;
  auto tokens = v["tokens"].get<std::vector<std::vector<int64_t>>>();
  auto mask = v["token_mask"].get<std::vector<std::vector<bool>>>();
  for (size_t r2 = 0; r2 < tokens.size(); ++r2) {
    rows.push_back(torch::tensor(tokens[r2]));
    std::vector<int64_t> m(mask[r2].begin(), mask[r2].end());
    masks.push_back(torch::tensor(m).to(torch::kBool));
  }
  batch[kLanguageTokens] = torch::stack(rows);
  batch[kLanguageMask] = torch::stack(masks);
  return batch;
}

int64_t max_action_dim() { return base_ref()["variants"]["default"]["config"]["max_action_dim"]; }
int64_t batch_size() { return base_ref()["batch"]; }

lora::LoraSettings smolvla_settings() {
  lora::PeftConfig c;
  c.r = lora_ref()["r"];
  c.lora_alpha = lora_ref()["lora_alpha"].get<int64_t>();
  return lora::resolve_peft(c, "smolvla", /*has_pretrained_path=*/true);
}

torch::Tensor chunk_of(SmolVLAPolicy& p) {
  p.eval();
  torch::NoGradGuard ng;
  return p.predict_action_chunk(inputs(), t(221, {batch_size(), 5, max_action_dim()}));
}

void expect_close_list(const torch::Tensor& got, const Json& want, double tol, const std::string& what) {
  auto w = torch::tensor(want.get<std::vector<double>>()).to(torch::kFloat).view(got.sizes());
  const double scale = std::max(1.0, w.abs().max().item<double>());
  EXPECT_LE((got - w).abs().max().item<double>(), tol * scale) << what;
}

// PEFT's live name for one of our adapter parameters.
std::string peft_live_name(const std::string& ours) {
  std::string s = "base_model.model." + ours;
  for (const char* ab : {".lora_A.", ".lora_B."}) {
    auto pos = s.find(ab);
    if (pos != std::string::npos) s.replace(pos, 8, std::string(ab) + "default.");
  }
  return s;
}

// Fills the adapters as the script's fill_lora: sorted by PEFT's live names.
void fill_lora(SmolVLAPolicy& p) {
  std::map<std::string, torch::Tensor> by_peft;
  for (auto& item : p.named_parameters())
    if (lora::is_adapter_parameter(item.key())) by_peft[peft_live_name(item.key())] = item.value();
  torch::NoGradGuard ng;
  int64_t k = 0;
  const double scale = lora_ref()["lora_fill_scale"];
  for (auto& [name, x] : by_peft) x.copy_(testing::reference_formula(x.numel(), 300 + k++, scale).view(x.sizes()));
}

TEST(PeftConfig, LeRobotFieldsDefaultsAndValidation) {
  auto c = lora::peft_config_from_json(Json::parse(R"({"target_modules": null, "full_training_modules": null,
      "method_type": "LORA", "init_type": null, "r": 16, "lora_alpha": null})"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->r, 16);
  EXPECT_FALSE(lora::peft_config_from_json(Json(nullptr)).has_value());
  EXPECT_THROW(lora::peft_config_from_json(Json::parse(R"({"lora_dropout": 0.1})")), Error);
  auto s = lora::resolve_peft(*c, "smolvla", true);
  EXPECT_EQ(*s.target_regex, lora_ref()["adapter_config"]["target_modules"].get<std::string>());
  EXPECT_EQ(s.lora_alpha, 8) << "PEFT's default when LeRobot's lora_alpha is null";
  EXPECT_EQ(s.r, 16);
  EXPECT_TRUE(s.modules_to_save.empty());
  // ACT, Diffusion and VQ-BeT declare no targets: LeRobot asks for --peft.target_modules.
  for (const char* type : {"act", "diffusion", "vqbet"}) EXPECT_THROW(lora::resolve_peft(*c, type, true), Error) << type;
  lora::PeftConfig named = *c;
  named.target_modules = Json(std::vector<std::string>{"q_proj"});
  EXPECT_EQ(lora::resolve_peft(named, "act", true).target_names, std::vector<std::string>{"q_proj"});
  EXPECT_THROW(lora::resolve_peft(*c, "smolvla", false), Error) << "no PEFT from scratch";
  lora::PeftConfig other = *c;
  other.method_type = "IA3";
  EXPECT_THROW(lora::resolve_peft(other, "smolvla", true), Error);
  // π0/π0.5: the expert's q/v and the projections; π0.5 with proprioceptive memory saves its projection.
  EXPECT_EQ(lora::default_peft_targets("pi0")->target_modules.get<std::string>(),
            R"((.*\.gemma_expert\..*\.self_attn\.(q|v)_proj|model\.(state_proj|action_in_proj|action_out_proj|action_time_mlp_in|action_time_mlp_out)))");
  EXPECT_EQ(lora::default_peft_targets("pi05", true)->modules_to_save, std::vector<std::string>{"model.proprio_history_proj"});
  EXPECT_TRUE(lora::default_peft_targets("pi05", false)->modules_to_save.empty());
  // PEFT's list matching: equal, or ending in "." + entry.
  lora::LoraSettings list;
  list.target_names = {"q_proj"};
  EXPECT_TRUE(lora::is_target(list, "a.b.q_proj"));
  EXPECT_TRUE(lora::is_target(list, "q_proj"));
  EXPECT_FALSE(lora::is_target(list, "a.bq_proj"));
}

TEST(LoraReference, TargetsNamesShapesAndInitialisationMatchPeft) {
  auto policy = make_policy();
  const auto base_chunk = chunk_of(*policy);
  const auto s = smolvla_settings();
  auto targeted = lora::inject(*policy, s);
  lora::freeze_base(*policy, s);
  EXPECT_EQ(targeted, lora_ref()["targeted_modules"].get<std::vector<std::string>>());
  std::map<std::string, std::vector<int64_t>> trainable;
  for (const auto& p : policy->named_parameters())
    if (p.value().requires_grad()) trainable[peft_live_name(p.key())] = p.value().sizes().vec();
  std::map<std::string, std::vector<int64_t>> want;
  for (const auto& [k, v] : lora_ref()["trainable"].items()) want[k] = v.get<std::vector<int64_t>>();
  EXPECT_EQ(trainable, want);
  for (const auto& p : policy->named_parameters())
    if (p.key().find(".lora_B.") != std::string::npos) {
      EXPECT_EQ(p.value().abs().sum().item<double>(), 0.0) << p.key();
    }
  EXPECT_DOUBLE_EQ(s.scaling(), lora_ref()["scaling"].get<double>());
  // Adapters at PEFT's init leave the policy's actions as they were, and as LeRobot's.
  const auto chunk = chunk_of(*policy);
  EXPECT_TRUE(torch::equal(chunk, base_chunk));
  expect_close_list(chunk, lora_ref()["base_chunk"], 1e-4, "chunk at init");
  // A fresh A is nn.Linear's kaiming_uniform(a=√5): |A| <= 1/√in.
  auto a = policy->model->state_proj->named_parameters()["lora_A.weight"];
  EXPECT_LE(a.abs().max().item<double>(), 1.0 / std::sqrt(static_cast<double>(a.size(1))) + 1e-7);
  EXPECT_GT(a.abs().max().item<double>(), 0.0);
}

TEST(LoraReference, LossGradientsAndChunkWithAdaptersMatchPeft) {
  auto policy = make_policy();
  const auto s = smolvla_settings();
  lora::inject(*policy, s);
  lora::freeze_base(*policy, s);
  fill_lora(*policy);
  policy->train();
  auto out = policy->forward(inputs(), t(220, {batch_size(), 5, max_action_dim()}), torch::tensor({0.3f, 0.8f}));
  out.loss.backward();
  const double want_loss = lora_ref()["loss"];
  EXPECT_NEAR(out.loss.item<double>(), want_loss, 1e-5 * std::max(1.0, std::abs(want_loss)));
  std::map<std::string, torch::Tensor> params;
  for (auto& p : policy->named_parameters()) {
    params[peft_live_name(p.key())] = p.value();
    if (!p.value().requires_grad()) {
      EXPECT_FALSE(p.value().grad().defined()) << p.key() << " is frozen";
    }
  }
  ASSERT_FALSE(lora_ref()["grads"].empty());
  for (const auto& [name, want] : lora_ref()["grads"].items()) {
    ASSERT_TRUE(params.count(name)) << name;
    ASSERT_TRUE(params[name].grad().defined()) << name;
    EXPECT_NEAR(params[name].grad().abs().sum().item<double>(), want.get<double>(), 2e-4 * std::max(1e-3, want.get<double>())) << name;
  }
  expect_close_list(chunk_of(*policy), lora_ref()["chunk"], 1e-4, "chunk with adapters");
  // The adapter file's names and shapes as PEFT's save_pretrained writes them.
  std::map<std::string, std::vector<int64_t>> keys, want_keys;
  for (const auto& [k, v] : lora::adapter_tensors(*policy, s)) keys[k] = v.sizes().vec();
  for (const auto& [k, v] : lora_ref()["adapter_keys"].items()) want_keys[k] = v.get<std::vector<int64_t>>();
  EXPECT_EQ(keys, want_keys);
}

TEST(LoraReference, PeftWrittenAdapterFolderLoadsAndGivesItsChunk) {
  auto policy = make_policy();
  auto s = lora::load_adapter_folder(data("smolvla_lora"), *policy);
  EXPECT_EQ(s.r, lora_ref()["r"].get<int64_t>());
  expect_close_list(chunk_of(*policy), lora_ref()["chunk"], 1e-4, "chunk with PEFT's adapter file");
}

TEST(LoraReference, WrittenAdapterFolderIsPeftsFileForFile) {
  auto policy = make_policy();
  const auto s = smolvla_settings();
  lora::inject(*policy, s);
  fill_lora(*policy);
  const auto dir = std::filesystem::temp_directory_path() / ("lerobot_lora_" + std::to_string(::getpid()));
  lora::save_adapter_folder(dir, *policy, s, "formula-filled", "SmolVLAPolicy", "lerobot.policies.smolvla.modeling_smolvla");
  std::ifstream in(dir / "adapter_config.json");
  Json ours = Json::parse(in), theirs = lora_ref()["adapter_config"];
  for (auto* j : {&ours, &theirs}) j->erase("peft_version");
  EXPECT_EQ(ours.dump(), theirs.dump());
  auto mine = load_safetensors(dir / "adapter_model.safetensors");
  auto peft = load_safetensors(data("smolvla_lora/adapter_model.safetensors"));
  ASSERT_EQ(mine.size(), peft.size());
  for (const auto& [k, v] : peft) {
    ASSERT_TRUE(mine.count(k)) << k;
    EXPECT_TRUE(torch::allclose(mine[k], v, 1e-6, 1e-7)) << k;
  }
  if (const char* keep = std::getenv("LEROBOT_KEEP_LORA_DIR")) std::filesystem::copy(dir, keep, std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(dir);
}

TEST(LoraTrain, AdamStepsMoveOnlyTheAdaptersAndBaseBytesStayTheSame) {
  auto policy = make_policy();
  const auto s = smolvla_settings();
  lora::inject(*policy, s);
  lora::freeze_base(*policy, s);
  std::map<std::string, torch::Tensor> before;
  std::vector<torch::Tensor> trainable;
  for (auto& p : policy->named_parameters()) {
    before[p.key()] = p.value().detach().clone();
    if (p.value().requires_grad()) trainable.push_back(p.value());
  }
  torch::optim::AdamW opt(trainable, torch::optim::AdamWOptions(1e-3));
  policy->train();
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    auto out = policy->forward(inputs(), t(220 + step, {batch_size(), 5, max_action_dim()}), torch::tensor({0.3f, 0.8f}));
    out.loss.backward();
    opt.step();
  }
  int64_t moved = 0, adapters = 0;
  for (auto& p : policy->named_parameters()) {
    const auto& b = before[p.key()];
    if (lora::is_adapter_parameter(p.key())) {
      ++adapters;
      if (!torch::equal(b, p.value())) ++moved;
    } else {
      EXPECT_EQ(std::memcmp(b.data_ptr(), p.value().contiguous().data_ptr(), b.nbytes()), 0) << p.key() << " changed";
    }
  }
  EXPECT_EQ(adapters, 2 * lora_ref()["targeted_modules"].size());
  EXPECT_EQ(moved, adapters) << "every adapter (B from zero, A through B) moves";
}

TEST(LoraMerge, MergedWeightsGiveTheAdaptedChunk) {
  auto policy = make_policy();
  const auto s = smolvla_settings();
  lora::inject(*policy, s);
  fill_lora(*policy);
  const auto adapted = chunk_of(*policy);
  lora::merge_adapters(*policy);
  expect_close_list(chunk_of(*policy), lora_ref()["chunk"], 1e-4, "merged chunk");
  EXPECT_LE((chunk_of(*policy) - adapted).abs().max().item<double>(), 1e-4);
}

}  // namespace
}  // namespace lerobot
