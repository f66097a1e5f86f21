// SmolVLA checkpoints in the shape LeRobot publishes them: lerobot/smolvla_base's config.json keys
// and values (an older LeRobot's: no device or rtc_config key, prefix_length 0, num_expert_layers
// 0, pad_language_to max_length, load_vlm_weights true) build the policy with the backbone in
// bfloat16; and an older pipeline whose tokenizer step names the tokenizer by Hub id (no
// tokenizer/ artifact) finds it through the model folder resolver.
#include <gtest/gtest.h>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/policies/smolvla/configuration_smolvla.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

const std::string kHubBackbone = "HuggingFaceTB/SmolVLM2-500M-Video-Instruct";

fs::path tiny_vlm() { return fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data/smolvla_tiny_vlm"; }

// The Hub id resolves to the tests' tiny folder; anything else is refused (no network here).
struct TinyBackboneResolver {
  std::vector<std::string> asked;
  TinyBackboneResolver() {
    set_model_folder_resolver([this](const std::string& name, const std::vector<std::string>&, const std::string& flag) {
      asked.push_back(name);
      if (name != kHubBackbone) throw std::runtime_error("unexpected model " + name + " for " + flag);
      return tiny_vlm();
    });
  }
  ~TinyBackboneResolver() { set_model_folder_resolver(nullptr); }
};

Json smolvla_base_config() {
  Json features = {{"observation.state", {{"type", "STATE"}, {"shape", {6}}}},
                   {"observation.image2", {{"type", "VISUAL"}, {"shape", {3, 256, 256}}}},
                   {"observation.image", {{"type", "VISUAL"}, {"shape", {3, 256, 256}}}},
                   {"observation.image3", {{"type", "VISUAL"}, {"shape", {3, 256, 256}}}}};
  return Json{{"type", "smolvla"}, {"n_obs_steps", 1},
              {"normalization_mapping", {{"VISUAL", "IDENTITY"}, {"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}}},
              {"input_features", features},
              {"output_features", {{"action", {{"type", "ACTION"}, {"shape", {6}}}}}},
              {"chunk_size", 50}, {"n_action_steps", 50}, {"max_state_dim", 32}, {"max_action_dim", 32},
              {"resize_imgs_with_padding", {512, 512}}, {"empty_cameras", 0}, {"adapt_to_pi_aloha", false},
              {"use_delta_joint_actions_aloha", false}, {"tokenizer_max_length", 48}, {"num_steps", 10},
              {"use_cache", true}, {"freeze_vision_encoder", true}, {"train_expert_only", true},
              {"train_state_proj", true}, {"optimizer_lr", 0.0001}, {"optimizer_betas", {0.9, 0.95}},
              {"optimizer_eps", 1e-08}, {"optimizer_weight_decay", 1e-10}, {"optimizer_grad_clip_norm", 10},
              {"scheduler_warmup_steps", 1000}, {"scheduler_decay_steps", 30000}, {"scheduler_decay_lr", 2.5e-06},
              {"vlm_model_name", kHubBackbone}, {"load_vlm_weights", true}, {"attention_mode", "cross_attn"},
              {"prefix_length", 0}, {"pad_language_to", "max_length"}, {"num_expert_layers", 0},
              {"num_vlm_layers", 16}, {"self_attn_every_n_layers", 2}, {"expert_width_multiplier", 0.75}};
}

TEST(SmolVLACheckpoint, SmolvlaBaseStyleConfigBuildsTheBfloat16Policy) {
  TinyBackboneResolver resolver;
  const fs::path dir = testing::make_temp_dir("smolvla_base_cfg");
  Json base = smolvla_base_config();
  base["resize_imgs_with_padding"] = {64, 64};  // 512 makes 4096 patches of the tiny 8-pixel tower: slow, and beside the point
  write_file_atomic(fs::path(dir) / "config.json", base.dump(4));
  auto cfg = load_policy_config(fs::path(dir) / "config.json", std::string("smolvla"));
  const auto& c = dynamic_cast<const SmolVLAConfig&>(*cfg);
  EXPECT_TRUE(c.load_vlm_weights);
  EXPECT_EQ(c.pad_language_to, "max_length");
  EXPECT_EQ(c.prefix_length, 0);
  EXPECT_EQ(c.input_feature_order,
            (std::vector<std::string>{"observation.state", "observation.image2", "observation.image", "observation.image3"}));
  PolicyBuildOptions opts;
  opts.load_pretrained_backbone = false;  // as when a checkpoint's weights follow
  auto policy = make_policy(*cfg, opts);
  EXPECT_EQ(resolver.asked, std::vector<std::string>{kHubBackbone});
  int bf16 = 0, f32 = 0;
  for (const auto& [name, t] : policy->state_dict()) (t.scalar_type() == torch::kBFloat16 ? bf16 : f32) += 1;
  EXPECT_GT(bf16, 100);  // the tiny VLM and expert
  EXPECT_EQ(f32, 14);    // projections and the cross-attention k/v, as in LeRobot's
  // The cameras come in the config's order and are resized; the state is padded.
  Batch batch;
  for (const auto& k : {"observation.image", "observation.image2", "observation.image3"})
    batch[k] = torch::rand({1, 3, 40, 56});
  batch["observation.state"] = torch::zeros({1, 6});
  batch["observation.language.tokens"] = torch::full({1, 48}, 2, torch::kInt64);
  batch["observation.language.attention_mask"] = torch::ones({1, 48}, torch::kBool);
  const auto chunk = policy->predict_action_chunk(batch);
  EXPECT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{1, 50, 6}));
  EXPECT_TRUE(torch::isfinite(chunk).all().item<bool>());
}

TEST(SmolVLACheckpoint, OlderPipelineNamingTheTokenizerByHubIdLoads) {
  TinyBackboneResolver resolver;
  const fs::path dir = testing::make_temp_dir("smolvla_old_pipeline");
  auto cfg = load_policy_config([&] {
    write_file_atomic(fs::path(dir) / "config.json", smolvla_base_config().dump(4));
    return fs::path(dir) / "config.json";
  }());
  const Stats stats = {{"observation.state", {{"mean", torch::zeros({6})}, {"std", torch::ones({6})}}},
                       {"action", {{"mean", torch::zeros({6})}, {"std", torch::ones({6})}}}};
  save_policy_processors(dir, make_policy_processors(*cfg, stats));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "tokenizer/tokenizer.json"));
  // As an older LeRobot wrote it: the Hub id in the step's config, no artifact, no tokenizer/.
  const fs::path pre = fs::path(dir) / "policy_preprocessor.json";
  Json j = Json::parse(read_file(pre));
  for (auto& step : j["steps"])
    if (step["registry_name"] == "tokenizer_processor") {
      step["config"]["tokenizer_name"] = kHubBackbone;
      step.erase("artifacts");
    }
  write_file_atomic(pre, j.dump(2));
  fs::remove_all(fs::path(dir) / "tokenizer");
  resolver.asked.clear();
  const PolicyProcessors p = load_policy_processors(dir);
  EXPECT_EQ(resolver.asked, std::vector<std::string>{kHubBackbone});
  ASSERT_TRUE(p.language.has_value());
  EXPECT_EQ(p.language->padding, "max_length");
  Batch batch{{"observation.state", torch::zeros({2, 6})}};
  const Batch out = p.preprocess(batch, {"pick up the cube", "stack 2 blocks"});
  EXPECT_EQ(out.at("observation.language.tokens").sizes().vec(), (std::vector<int64_t>{2, 48}));  // max_length padding
  EXPECT_THROW(p.preprocess(batch, {"only one task"}), Error) << "one task per row";
}

}  // namespace
}  // namespace lerobot
