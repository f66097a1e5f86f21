// VQ-BeT through the trainer on the generated reach2d dataset: phase 1 trains only the VQ-VAE,
// phase 2 only the rest (the VQ-VAE and its codebooks frozen), the log shows each phase's values,
// the optimizer has LeRobot's three groups, a run resumed inside phase 1 ends bit-identical to the
// uninterrupted one, and the checkpoint runs through the deployment API.
#include <gtest/gtest.h>

#include <fstream>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/inference.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::count_different_tensors;
using testing::run_train;
using testing::train_scratch;

std::vector<std::string> tiny_vqbet_run(const fs::path& out, int64_t steps, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "--policy.type=vqbet", "--dataset.root=" + testing::reach2d_dataset().string(), "--policy.n_obs_steps=2",
      "--policy.n_action_pred_token=2", "--policy.action_chunk_size=3", "--policy.crop_shape=[56,56]",
      "--policy.n_vqvae_training_steps=3", "--policy.vqvae_n_embed=8", "--policy.vqvae_embedding_dim=16",
      "--policy.vqvae_enc_hidden_dim=32", "--policy.gpt_n_layer=1", "--policy.gpt_hidden_dim=32",
      "--policy.gpt_input_dim=32", "--policy.gpt_output_dim=32", "--policy.gpt_n_head=2",
      "--policy.pretrained_backbone_weights=null", "--batch_size=4", "--steps=" + std::to_string(steps),
      "--log_freq=1", "--num_workers=0", "--seed=7", "--output_dir=" + out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TensorMap weights(const fs::path& run, int step) { return testing::checkpoint_weights(run, step); }

bool same(const TensorMap& a, const TensorMap& b, const std::string& key) { return torch::equal(a.at(key), b.at(key)); }

TEST(VQBeTTrain, PhaseOneTrainsTheVqVaeThenTheGptTrainsWithTheVqVaeFrozen) {
  const fs::path out = train_scratch() / "vqbet_phases";
  run_train(tiny_vqbet_run(out, 6, {"--save_freq=1"}));
  const auto w0 = weights(out, 1), w3 = weights(out, 3), w6 = weights(out, 6);
  const std::string enc = "vqbet.action_head.vqvae_model.encoder.0.weight";
  const std::string code = "vqbet.action_head.vqvae_model.vq_layer.layers.0._codebook.embed";
  const std::string gpt = "vqbet.policy.transformer.wte.weight";
  const std::string head = "vqbet.action_head.map_to_cbet_preds_offset.0.weight";
  EXPECT_FALSE(same(w0, w3, enc)) << "phase 1 trains the VQ-VAE encoder";
  EXPECT_FALSE(same(w0, w3, code)) << "phase 1 moves the codebooks";
  EXPECT_TRUE(same(w0, w3, gpt)) << "phase 1 leaves the GPT alone";
  EXPECT_TRUE(same(w0, w3, head)) << "phase 1 leaves the heads alone";
  EXPECT_TRUE(same(w3, w6, enc)) << "phase 2 leaves the VQ-VAE alone";
  EXPECT_TRUE(same(w3, w6, code)) << "phase 2 leaves the codebooks alone";
  EXPECT_FALSE(same(w3, w6, gpt)) << "phase 2 trains the GPT";
  EXPECT_FALSE(same(w3, w6, head)) << "phase 2 trains the heads";
  EXPECT_FALSE(w0.at("vqbet.action_head.vqvae_model.discretized").item<bool>());
  EXPECT_TRUE(w3.at("vqbet.action_head.vqvae_model.discretized").item<bool>());
  EXPECT_TRUE(w6.at("vqbet.action_head.vqvae_model.vq_layer.freeze_codebook").item<bool>());

  // The metrics: phase 1 logs the VQ-VAE's values, phase 2 the GPT's, each only in its phase.
  std::ifstream in(out / "train_metrics.jsonl");
  int phase1 = 0, phase2 = 0;
  for (std::string line; std::getline(in, line);) {
    const Json j = Json::parse(line);
    if (!j.contains("step") || j.value("split", "train") != "train") continue;
    const int64_t step = j["step"];
    EXPECT_EQ(j.contains("recon_l1_error"), step <= 3) << line;
    EXPECT_EQ(j.contains("offset_loss"), step > 3) << line;
    phase1 += j.contains("n_different_codes");
    phase2 += j.contains("equal_primary_code_rate");
  }
  EXPECT_EQ(phase1, 3);
  EXPECT_EQ(phase2, 3);

  // LeRobot's groups: the rest at the optimizer's lr and decay, the VQ-VAE at its own, the GPT's
  // biases and norms without decay.
  std::ifstream groups_file(out / "checkpoints/000006/training_state/optimizer_param_groups.json");
  const Json groups = Json::parse(groups_file);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_DOUBLE_EQ(groups[0]["weight_decay"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(groups[1]["weight_decay"].get<double>(), 1e-4);
  EXPECT_DOUBLE_EQ(groups[1]["initial_lr"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(groups[2]["weight_decay"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(groups[0]["initial_lr"].get<double>(), 1e-4);

  // The checkpoint predicts chunks of action_chunk_size through the deployment API.
  InferencePolicy policy(out / "checkpoints/000006/pretrained_model");
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::zeros({2})},
                                              {"observation.image", torch::full({3, 64, 64}, 128, torch::kUInt8)}};
  const auto chunk = policy.predict_action_chunk(obs);
  EXPECT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(torch::isfinite(chunk).all().item<bool>());
}

TEST(VQBeTTrain, ARunResumedInsidePhaseOneEndsBitIdentical) {
  const fs::path full = train_scratch() / "vqbet_full", part = train_scratch() / "vqbet_part";
  run_train(tiny_vqbet_run(full, 6, {"--save_freq=2"}));
  run_train(tiny_vqbet_run(part, 2, {"--save_freq=2"}));
  run_train({"--resume=true", "--config_path=" + (part / "checkpoints/last/pretrained_model").string(), "--steps=6"});
  const fs::path a = full / "checkpoints/000006", b = part / "checkpoints/000006";
  testing::expect_same_model_and_optimizer(a, b);
  // The comparison can fail: the step-2 weights (phase 1) are not the step-6 ones.
  EXPECT_GT(count_different_tensors(full / "checkpoints/000002/pretrained_model/model.safetensors",
                                    a / "pretrained_model/model.safetensors"), 0);
}

// `lerobot-cpp train --policy.type=vqbet` with no dataset: the built-in demo takes VQ-BeT sizes that
// fit it (LeRobot's defaults crop 84x84 out of the demo's 64-pixel camera, and their 20000-step
// VQ-VAE phase is longer than the whole demo), so it trains through both phases.
TEST(VQBeTTrain, TheBuiltInDemoTrainsVqbetThroughBothPhases) {
  const fs::path out = train_scratch() / "vqbet_demo";
  std::string log;
  // The demo records its dataset into LEROBOT_CPP_CACHE: a scratch one, not the user's cache.
  const int code = testing::run_shell("LEROBOT_CPP_CACHE=" + (train_scratch() / "demo_cache").string() + " " +
                                          std::string(LEROBOT_CLI) +
                                          " train --policy.type=vqbet --steps=2 --policy.n_vqvae_training_steps=1 "
                                          "--env_eval_freq=0 --save_freq=2 --log_freq=1 --output_dir=" + out.string(),
                                      &log);
  ASSERT_EQ(code, 0) << log;
  EXPECT_NE(log.find("DEMO mode"), std::string::npos) << log;
  EXPECT_NE(log.find("the GPT trains from the next step"), std::string::npos) << log;
  std::ifstream in(out / "checkpoints/000002/pretrained_model/config.json");
  const Json cfg = Json::parse(in);
  EXPECT_EQ(cfg["crop_shape"], Json::parse("[56, 56]"));
  EXPECT_EQ(cfg["n_obs_steps"], 3);
  EXPECT_EQ(cfg["n_vqvae_training_steps"], 1) << "the user's flag wins over the demo's";
}

}  // namespace
}  // namespace lerobot
