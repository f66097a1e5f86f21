// Normalizer math (MEAN_STD, MIN_MAX, QUANTILES, IDENTITY) and the processor files round trip.
#include <gtest/gtest.h>

#include <filesystem>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/normalize.h"
#include "lerobot/policies/processor_io.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

namespace stdfs = std::filesystem;

Stats sample_stats() {
  Stats s;
  s["observation.state"] = {{"mean", torch::tensor({1.0f, -2.0f})}, {"std", torch::tensor({2.0f, 0.5f})},
                            {"min", torch::tensor({-1.0f, -3.0f})}, {"max", torch::tensor({3.0f, -3.0f})},
                            {"q01", torch::tensor({-0.5f, -2.5f})}, {"q99", torch::tensor({2.5f, 0.5f})}};
  s["action"] = {{"mean", torch::tensor({0.5f})}, {"std", torch::tensor({4.0f})},
                 {"min", torch::tensor({-2.0f})}, {"max", torch::tensor({6.0f})}};
  s["observation.images.top"] = {{"mean", torch::tensor({0.1f, 0.2f, 0.3f})}, {"std", torch::tensor({0.5f, 0.5f, 0.5f})}};
  s["timestamp"] = {{"min", torch::tensor({0.0f})}, {"count", torch::tensor({10.0f})}};
  return s;
}

std::vector<std::pair<std::string, PolicyFeature>> sample_features() {
  return {{"observation.images.top", {"VISUAL", {3, 2, 2}}},
          {"observation.state", {"STATE", {2}}},
          {"action", {"ACTION", {1}}}};
}

TEST(Normalizer, MeanStdMath) {
  Normalizer n(sample_features(), {{"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}, {"VISUAL", "MEAN_STD"}}, sample_stats());
  Batch b = {{"observation.state", torch::tensor({{3.0f, -1.0f}})},
             {"action", torch::tensor({{{4.5f}}})},
             {"observation.images.top", torch::full({1, 3, 2, 2}, 0.6f)},
             {"other", torch::tensor({7.0f})}};
  auto out = n.normalize(b);
  EXPECT_NEAR(out["observation.state"][0][0].item<double>(), (3.0 - 1.0) / (2.0 + 1e-8), 1e-6);
  EXPECT_NEAR(out["observation.state"][0][1].item<double>(), (-1.0 + 2.0) / (0.5 + 1e-8), 1e-6);
  EXPECT_NEAR(out["action"][0][0][0].item<double>(), 1.0, 1e-6);
  // Visual 1-D stats are reshaped to (C, 1, 1) and broadcast per channel.
  EXPECT_NEAR(out["observation.images.top"][0][2][1][1].item<double>(), (0.6 - 0.3) / 0.5, 1e-6);
  EXPECT_EQ(out["other"].item<float>(), 7.0f);
  auto back = n.unnormalize(out);
  EXPECT_TRUE(torch::allclose(back["observation.state"], b["observation.state"], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(back["action"], b["action"], 1e-5, 1e-6));
}

TEST(Normalizer, MinMaxQuantilesIdentity) {
  Normalizer mm(sample_features(), {{"STATE", "MIN_MAX"}, {"ACTION", "MIN_MAX"}}, sample_stats());
  auto s = torch::tensor({{1.0f, -3.0f}});
  auto out = mm.apply(s, "observation.state", "STATE", false);
  EXPECT_NEAR(out[0][0].item<double>(), 2 * (1.0 + 1.0) / 4.0 - 1, 1e-6);
  // max == min: the denominator becomes eps, so min maps to -1.
  EXPECT_NEAR(out[0][1].item<double>(), -1.0, 1e-6);
  EXPECT_TRUE(torch::allclose(mm.apply(out, "observation.state", "STATE", true), s, 1e-5, 1e-6));
  EXPECT_NEAR(mm.apply(torch::tensor({6.0f}), "action", "ACTION", false).item<double>(), 1.0, 1e-6);
  // Images have no MIN_MAX entry here: IDENTITY.
  auto img = torch::rand({3, 2, 2});
  EXPECT_TRUE(torch::equal(mm.apply(img, "observation.images.top", "VISUAL", false), img));

  Normalizer q(sample_features(), {{"STATE", "QUANTILES"}}, sample_stats());
  EXPECT_NEAR(q.apply(torch::tensor({2.5f, -2.5f}), "observation.state", "STATE", false)[0].item<double>(), 1.0, 1e-6);
  EXPECT_NEAR(q.apply(torch::tensor({2.5f, -2.5f}), "observation.state", "STATE", false)[1].item<double>(), -1.0, 1e-6);
  // A MEAN_STD normalizer without std is a data error.
  Stats bad;
  bad["observation.state"] = {{"mean", torch::zeros({2})}};
  Normalizer nb(sample_features(), {{"STATE", "MEAN_STD"}}, bad);
  EXPECT_THROW(nb.apply(torch::zeros({2}), "observation.state", "STATE", false), Error);
  EXPECT_THROW(Normalizer(sample_features(), {{"STATE", "ZSCORE"}}, bad), Error);
}

TEST(ProcessorFiles, RoundTripAndLayout) {
  auto cfg = testing::small_act_config(0);
  cfg.input_features["observation.images.top"] = {"VISUAL", {3, 32, 32}};
  cfg.input_features["observation.state"] = {"STATE", {2}};
  cfg.output_features["action"] = {"ACTION", {1}};
  cfg.input_feature_order = {"observation.state", "observation.images.top"};
  auto stats = sample_stats();
  apply_imagenet_stats(stats, {"observation.images.top"});
  auto procs = make_policy_processors(cfg, stats);
  const auto dir = testing::make_temp_dir("processors");
  save_policy_processors(dir, procs);

  Json pre = Json::parse(read_file(stdfs::path(dir) / "policy_preprocessor.json"));
  EXPECT_EQ(pre["name"], "policy_preprocessor");
  ASSERT_EQ(pre["steps"].size(), 4u);
  EXPECT_EQ(pre["steps"][0]["registry_name"], "rename_observations_processor");
  EXPECT_EQ(pre["steps"][1]["registry_name"], "to_batch_processor");
  EXPECT_EQ(pre["steps"][2]["registry_name"], "device_processor");
  EXPECT_TRUE(pre["steps"][2]["config"]["float_dtype"].is_null());
  EXPECT_EQ(pre["steps"][3]["registry_name"], "normalizer_processor");
  EXPECT_EQ(pre["steps"][3]["state_file"], "policy_preprocessor_step_3_normalizer_processor.safetensors");
  EXPECT_EQ(pre["steps"][3]["config"]["norm_map"]["VISUAL"], "MEAN_STD");
  EXPECT_EQ(pre["steps"][3]["config"]["features"].begin().key(), "observation.state");
  EXPECT_EQ(pre["steps"][3]["config"]["features"]["observation.images.top"]["shape"], Json::array({3, 32, 32}));
  Json post = Json::parse(read_file(stdfs::path(dir) / "policy_postprocessor.json"));
  EXPECT_EQ(post["steps"][0]["registry_name"], "unnormalizer_processor");
  EXPECT_EQ(post["steps"][0]["state_file"], "policy_postprocessor_step_0_unnormalizer_processor.safetensors");
  EXPECT_EQ(post["steps"][1]["registry_name"], "device_processor");

  // State file: every stat of every feature, flat keys, camera stats = ImageNet (3,1,1).
  auto state = load_safetensors(stdfs::path(dir) / "policy_preprocessor_step_3_normalizer_processor.safetensors");
  EXPECT_TRUE(state.count("timestamp.count"));
  EXPECT_TRUE(state.count("observation.state.q99"));
  ASSERT_TRUE(state.count("observation.images.top.std"));
  EXPECT_TRUE(torch::allclose(state["observation.images.top.std"], imagenet_std()));
  EXPECT_EQ(state["observation.images.top.mean"].sizes(), torch::IntArrayRef({3, 1, 1}));

  auto loaded = load_policy_processors(dir);
  Batch b = {{"observation.state", torch::randn({4, 2})}, {"action", torch::randn({4, 10, 1})},
             {"observation.images.top", torch::rand({4, 3, 32, 32})}};
  auto x = procs.preprocess(b), y = loaded.preprocess(b);
  for (const auto& kv : x) EXPECT_TRUE(torch::allclose(kv.second, y.at(kv.first))) << kv.first;
  EXPECT_FALSE(torch::allclose(x["observation.state"], b["observation.state"]));
  auto act = torch::randn({4, 1});
  EXPECT_TRUE(torch::allclose(loaded.postprocess_action(act), act * 4.0 + 0.5, 1e-5, 1e-6));
  // Missing state file: refused naming it.
  stdfs::remove(stdfs::path(dir) / "policy_postprocessor_step_0_unnormalizer_processor.safetensors");
  try {
    load_policy_processors(dir);
    FAIL() << "missing state file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.where()).find("unnormalizer_processor.safetensors"), std::string::npos);
  }
}

}  // namespace
}  // namespace lerobot
