// Save/load of pretrained_model directories: round trip, strict refusals, feature order,
// backbone weights file, and the deployment InferencePolicy.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/inference.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/policies/register_policies.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

using testing::make_temp_dir;
using testing::random_act_batch;
using testing::small_act_config;
namespace stdfs = std::filesystem;

std::string error_text(const Error& e) { return std::string(e.what()) + " | " + e.where() + " | " + e.fix(); }

TEST(ACTSaveLoad, RoundTripGivesIdenticalActions) {
  torch::manual_seed(1);
  auto cfg = small_act_config(2);
  auto policy = make_policy(cfg);
  auto batch = random_act_batch(cfg, 3, 7);
  auto before = policy->predict_action_chunk(batch);
  const auto dir = make_temp_dir("roundtrip");
  save_pretrained(*policy, dir);

  // model.safetensors carries {"format": "pt"} and the vae_encoder_pos_enc buffer.
  SafetensorsReader reader(stdfs::path(dir) / "model.safetensors");
  EXPECT_EQ(reader.metadata().at("format"), "pt");
  auto saved = load_safetensors(stdfs::path(dir) / "model.safetensors");
  EXPECT_TRUE(saved.count("model.vae_encoder_pos_enc"));
  EXPECT_EQ(saved.size(), policy->state_dict().size());
  // config.json: "type" first, LeRobot field names.
  Json j = Json::parse(read_file(stdfs::path(dir) / "config.json"));
  EXPECT_EQ(j.begin().key(), "type");
  EXPECT_EQ(j["type"], "act");
  EXPECT_EQ(j["chunk_size"], 10);
  EXPECT_TRUE(j["pretrained_backbone_weights"].is_null());
  // LeRobot's defaults for the hub fields are null (`private: bool | None = None`), and the
  // config.json Python LeRobot writes says so: we write and read null there too.
  EXPECT_TRUE(j["private"].is_null()) << j["private"].dump();

  auto loaded = load_pretrained(dir, std::string("act"));
  auto after = loaded->predict_action_chunk(batch);
  EXPECT_TRUE(torch::equal(before, after));
  j["private"] = true;  // both a null and a bool load
  write_file_atomic(stdfs::path(dir) / "config.json", dump_pretty(j));
  EXPECT_EQ(load_pretrained(dir, std::string("act"))->config().private_, std::optional<bool>(true));
  // A freshly initialised policy differs, so the comparison above is meaningful.
  torch::manual_seed(2);
  auto other = make_policy(cfg);
  EXPECT_FALSE(torch::allclose(before, other->predict_action_chunk(batch)));
}

TEST(ACTSaveLoad, RefusesAnotherPolicyType) {
  auto cfg = small_act_config(1);
  auto policy = make_policy(cfg);
  const auto dir = make_temp_dir("type");
  save_pretrained(*policy, dir);
  Json j = Json::parse(read_file(stdfs::path(dir) / "config.json"));
  j["type"] = "diffusion";
  write_file_atomic(stdfs::path(dir) / "config.json", j.dump(4));
  try {
    load_pretrained(dir, std::string("act"));
    FAIL() << "a diffusion config was accepted as act";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCheckpoint);
    EXPECT_NE(error_text(e).find("diffusion"), std::string::npos) << error_text(e);
    EXPECT_NE(error_text(e).find("config.json"), std::string::npos) << error_text(e);
  }
}

TEST(ACTSaveLoad, RefusesMissingUnexpectedAndMisshapedKeys) {
  auto cfg = small_act_config(1);
  auto policy = make_policy(cfg);
  const auto dir = make_temp_dir("keys");
  save_pretrained(*policy, dir);
  const auto model = stdfs::path(dir) / "model.safetensors";
  auto sd = load_safetensors(model);

  auto missing = sd;
  missing.erase("model.decoder.layers.0.multihead_attn.in_proj_weight");
  save_safetensors(model, missing);
  try {
    load_pretrained(dir);
    FAIL() << "missing key accepted";
  } catch (const Error& e) {
    EXPECT_NE(error_text(e).find("model.decoder.layers.0.multihead_attn.in_proj_weight"), std::string::npos);
    EXPECT_NE(error_text(e).find("model.safetensors"), std::string::npos);
  }

  auto extra = sd;
  extra["model.backbone.bn1.num_batches_tracked"] = torch::zeros({}, torch::kLong);
  save_safetensors(model, extra);
  try {
    load_pretrained(dir);
    FAIL() << "unexpected key accepted";
  } catch (const Error& e) {
    EXPECT_NE(error_text(e).find("num_batches_tracked"), std::string::npos);
  }

  auto shaped = sd;
  shaped["model.action_head.weight"] = torch::zeros({7, 64});
  save_safetensors(model, shaped);
  try {
    load_pretrained(dir);
    FAIL() << "mis-shaped key accepted";
  } catch (const Error& e) {
    EXPECT_NE(error_text(e).find("model.action_head.weight"), std::string::npos);
  }
}

TEST(ACTSaveLoad, CameraOrderFollowsDatasetOrderAndSurvivesConfigJson) {
  auto cfg = small_act_config(0);
  cfg.input_features["observation.images.wrist"] = {"VISUAL", {3, 32, 32}};
  cfg.input_features["observation.images.front"] = {"VISUAL", {3, 32, 32}};
  cfg.input_feature_order = {"observation.state", "observation.images.wrist", "observation.images.front"};
  ACTPolicy policy(cfg);
  EXPECT_EQ(policy.model->image_keys(), (std::vector<std::string>{"observation.images.wrist", "observation.images.front"}));
  const auto dir = make_temp_dir("order");
  save_pretrained(policy, dir);
  Json j = Json::parse(read_file(stdfs::path(dir) / "config.json"));
  std::vector<std::string> keys;
  for (auto it = j["input_features"].begin(); it != j["input_features"].end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, cfg.input_feature_order);
  auto loaded = load_pretrained(dir);
  auto* act = dynamic_cast<ACTPolicy*>(loaded.get());
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->model->image_keys(), policy.model->image_keys());
  // Every camera gets the same 2-D position grid and attention is permutation invariant over
  // memory tokens, so ACT's output does not depend on camera order beyond float rounding (the
  // order still matters for config.json and for policies that concatenate camera features).
  auto batch = random_act_batch(cfg, 2, 3);
  auto a = act->predict_action_chunk(batch);
  std::swap(batch["observation.images.wrist"], batch["observation.images.front"]);
  EXPECT_TRUE(torch::allclose(a, act->predict_action_chunk(batch), 1e-4, 1e-5));
}

// The trainer copies its config (ChoicePtr deep copies through JSON, whose objects are sorted):
// the dataset order of the input features must come along.
TEST(ACTSaveLoad, DatasetFeatureOrderSurvivesConfigCopies) {
  register_policy_configs();
  ChoicePtr<PolicyConfig> a;
  a.set_type("act", "policy");
  a->input_features["observation.state"] = {"STATE", {2}};
  a->input_features["observation.images.wrist"] = {"VISUAL", {3, 32, 32}};
  a->input_features["observation.images.front"] = {"VISUAL", {3, 32, 32}};
  a->input_feature_order = {"observation.state", "observation.images.wrist", "observation.images.front"};
  ChoicePtr<PolicyConfig> b = a;
  ASSERT_NE(b.ptr(), a.ptr());
  EXPECT_EQ(b->input_feature_order, a->input_feature_order);
  EXPECT_EQ(b->image_feature_keys(), (std::vector<std::string>{"observation.images.wrist", "observation.images.front"}));
  ChoicePtr<PolicyConfig> c;
  c = b;
  EXPECT_EQ(c->ordered_input_keys(), a->input_feature_order);
}

TEST(ACTSaveLoad, LoadsTorchvisionBackboneFileAndIgnoresFc) {
  torch::manual_seed(5);
  ResNetBackbone source("resnet18");
  TensorMap tv;
  for (auto& p : source->named_parameters(true)) tv[p.key()] = p.value().detach().clone();
  for (auto& b : source->named_buffers(true)) tv[b.key()] = b.value().clone().uniform_(0.5, 1.5);
  tv["fc.weight"] = torch::zeros({1000, 512});
  tv["fc.bias"] = torch::zeros({1000});
  tv["bn1.num_batches_tracked"] = torch::zeros({}, torch::kLong);
  const auto path = (stdfs::path(make_temp_dir("backbone")) / "resnet18.safetensors").string();
  save_safetensors(path, tv);
  auto cfg = small_act_config(1);
  cfg.pretrained_backbone_weights = path;
  ACTPolicy policy(cfg);
  auto sd = policy.state_dict();
  EXPECT_TRUE(torch::equal(sd.at("model.backbone.layer3.0.downsample.0.weight"), tv.at("layer3.0.downsample.0.weight")));
  EXPECT_TRUE(torch::equal(sd.at("model.backbone.layer4.1.bn2.running_var"), tv.at("layer4.1.bn2.running_var")));
  // A file lacking a key is refused, naming the key.
  tv.erase("layer2.1.conv2.weight");
  save_safetensors(path, tv);
  try {
    ACTPolicy bad(cfg);
    FAIL() << "incomplete backbone file accepted";
  } catch (const Error& e) {
    EXPECT_NE(error_text(e).find("layer2.1.conv2.weight"), std::string::npos) << error_text(e);
  }
}

TEST(ACTInference, RawObservationToUnnormalizedAction) {
  torch::manual_seed(3);
  auto cfg = small_act_config(1, 24);
  cfg.n_action_steps = 4;
  auto policy = make_policy(cfg);
  const auto dir = make_temp_dir("inference");
  save_pretrained(*policy, dir);
  Stats stats;
  stats["observation.state"] = {{"mean", torch::full({6}, 0.5)}, {"std", torch::full({6}, 2.0)}};
  stats["action"] = {{"mean", torch::arange(6).to(torch::kFloat)}, {"std", torch::full({6}, 3.0)}};
  stats["observation.images.cam0"] = {{"mean", torch::rand({3, 1, 1})}, {"std", torch::rand({3, 1, 1}) + 0.1}};
  apply_imagenet_stats(stats, {"observation.images.cam0"});
  save_policy_processors(dir, make_policy_processors(cfg, stats));

  InferencePolicy runner(dir);
  EXPECT_NE(runner.graphs_why_not().find("cpu"), std::string::npos) << runner.graphs_why_not();
  EXPECT_FALSE(runner.graphs_replaying());
  auto img_hwc = torch::randint(0, 256, {24, 24, 3}, torch::kUInt8);
  auto state = torch::randn({6});
  std::map<std::string, torch::Tensor> obs = {{"observation.images.cam0", img_hwc}, {"observation.state", state}};
  // Expected: hand-made preprocessing through the plain policy, then x*std+mean.
  Batch b;
  b["observation.images.cam0"] =
      ((img_hwc.permute({2, 0, 1}).to(torch::kFloat) / 255.0 - imagenet_mean()) / (imagenet_std() + 1e-8)).unsqueeze(0);
  b["observation.state"] = ((state - 0.5) / (2.0 + 1e-8)).unsqueeze(0);
  auto chunk = policy->predict_action_chunk(b)[0] * 3.0 + torch::arange(6).to(torch::kFloat);
  auto got_chunk = runner.predict_action_chunk(obs);
  EXPECT_TRUE(torch::allclose(got_chunk, chunk, 1e-4, 1e-4));
  // CHW uint8 gives the same; select_action walks the chunk then re-plans after n_action_steps.
  std::map<std::string, torch::Tensor> obs_chw = {{"observation.images.cam0", img_hwc.permute({2, 0, 1}).contiguous()},
                                                  {"observation.state", state}};
  for (int i = 0; i < 4; ++i) {
    auto a = runner.select_action(i % 2 ? obs : obs_chw);
    ASSERT_EQ(a.sizes(), torch::IntArrayRef({6}));
    EXPECT_TRUE(torch::allclose(a, chunk[i], 1e-4, 1e-4)) << "step " << i;
  }
  runner.reset();
  EXPECT_TRUE(torch::allclose(runner.select_action(obs), chunk[0], 1e-4, 1e-4));
  // Wrong resolution is refused with the key named.
  obs["observation.images.cam0"] = torch::zeros({20, 24, 3}, torch::kUInt8);
  EXPECT_THROW(runner.select_action(obs), Error);
}

}  // namespace
}  // namespace lerobot
