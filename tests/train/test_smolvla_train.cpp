// SmolVLA through the trainer on the generated reach2d dataset with the tiny SmolVLM backbone
// kept in tests/policies/data: the task strings are tokenized each step, only the expert and the
// projections train (the VLM frozen, as LeRobot's train_expert_only), the checkpoint has
// LeRobot's processor layout (newline + tokenizer steps, the tokenizer saved under tokenizer/),
// a resumed run ends bit-identical, and the checkpoint acts through the deployment API.
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

std::string tiny_vlm() { return std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_tiny_vlm"; }

std::vector<std::string> tiny_smolvla_run(const fs::path& out, int64_t steps, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "--policy.type=smolvla", "--dataset.root=" + testing::reach2d_dataset().string(),
      "--policy.vlm_model_name=" + tiny_vlm(), "--policy.num_vlm_layers=4", "--policy.chunk_size=4",
      "--policy.n_action_steps=4", "--policy.max_state_dim=8", "--policy.max_action_dim=8",
      "--policy.resize_imgs_with_padding=[32,32]", "--policy.tokenizer_max_length=16", "--policy.num_steps=2",
      "--batch_size=4", "--steps=" + std::to_string(steps), "--log_freq=1", "--num_workers=0", "--seed=7",
      "--output_dir=" + out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TensorMap weights(const fs::path& run, int step) { return testing::checkpoint_weights(run, step); }

TEST(SmolVLATrain, OnlyTheExpertAndProjectionsTrainAndTheCheckpointHasLeRobotsLayout) {
  const fs::path out = train_scratch() / "smolvla_run";
  run_train(tiny_smolvla_run(out, 3, {"--save_freq=1"}));
  const auto w1 = weights(out, 1), w3 = weights(out, 3);
  int moved_vlm = 0, moved_expert = 0;
  for (const auto& [k, v] : w1) {
    const bool moved = !torch::equal(v, w3.at(k));
    if (k.rfind("model.vlm_with_expert.vlm.", 0) == 0) moved_vlm += moved;
    else moved_expert += moved;
  }
  EXPECT_EQ(moved_vlm, 0) << "the VLM is frozen (train_expert_only)";
  EXPECT_GT(moved_expert, 10) << "the expert and the projections train";

  const fs::path pm = out / "checkpoints/000003/pretrained_model";
  std::ifstream pre_file(pm / "policy_preprocessor.json");
  const Json pre = Json::parse(pre_file);
  std::vector<std::string> steps;
  for (const auto& s : pre["steps"]) steps.push_back(s["registry_name"]);
  EXPECT_EQ(steps, (std::vector<std::string>{"rename_observations_processor", "to_batch_processor",
                                              "smolvla_new_line_processor", "tokenizer_processor", "device_processor",
                                              "normalizer_processor"}));
  EXPECT_EQ(pre["steps"][3]["config"]["tokenizer_name"], "tokenizer");
  EXPECT_EQ(pre["steps"][3]["artifacts"]["tokenizer_name"], "tokenizer");
  EXPECT_EQ(pre["steps"][3]["config"]["max_length"], 16);
  EXPECT_EQ(pre["steps"][5]["state_file"], "policy_preprocessor_step_5_normalizer_processor.safetensors");
  EXPECT_TRUE(fs::exists(pm / "policy_preprocessor_step_5_normalizer_processor.safetensors"));
  EXPECT_TRUE(fs::exists(pm / "tokenizer/tokenizer.json"));
  EXPECT_TRUE(fs::exists(pm / "tokenizer/tokenizer_config.json"));

  // Every parameter is in the optimizer's numbering (LeRobot's get_optim_params is all of them);
  // only the trainable ones have state.
  std::ifstream groups_file(out / "checkpoints/000003/training_state/optimizer_param_groups.json");
  const Json groups = Json::parse(groups_file);
  ASSERT_EQ(groups.size(), 1u);
  const auto state = load_safetensors(out / "checkpoints/000003/training_state/optimizer_state.safetensors");
  size_t with_state = 0;  // one exp_avg per parameter with state
  for (const auto& [k, v] : state) with_state += k.size() > 7 && k.compare(k.size() - 7, 7, "exp_avg") == 0;
  EXPECT_GT(groups[0]["params"].size(), with_state);
  EXPECT_GT(with_state, 10u);

  // The checkpoint acts through the deployment API, with and without a task.
  InferencePolicy policy(pm);
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::zeros({2})},
                                              {"observation.image", torch::full({3, 64, 64}, 128, torch::kUInt8)}};
  policy.set_task("Move the blue disc onto the green square.");
  const auto chunk = policy.predict_action_chunk(obs);
  EXPECT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(torch::isfinite(chunk).all().item<bool>());
}

// The in-training evaluation in the simulator: each env's task description is tokenized for it
// (reach2d's, the text its recorded dataset carries).
TEST(SmolVLATrain, TheSimulatorEvaluatesItWithTheEnvsTaskText) {
  const fs::path out = train_scratch() / "smolvla_eval";
  run_train(tiny_smolvla_run(out, 2, {"--env.type=reach2d", "--env.image_size=64", "--env_eval_freq=2",
                                      "--eval.n_episodes=2", "--eval.batch_size=2", "--env.episode_length=12"}));
  std::ifstream in(out / "train_metrics.jsonl");
  int evals = 0;
  for (std::string line; std::getline(in, line);) {
    const Json j = Json::parse(line);
    if (j.contains("pc_success")) ++evals;
  }
  EXPECT_EQ(evals, 1);
}

TEST(SmolVLATrain, TheTaskTextReachesThePolicy) {
  const fs::path out = train_scratch() / "smolvla_task";
  run_train(tiny_smolvla_run(out, 1));
  InferencePolicy policy(out / "checkpoints/last/pretrained_model");
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::zeros({2})},
                                              {"observation.image", torch::full({3, 64, 64}, 128, torch::kUInt8)}};
  auto tokens = [&](const std::string& task) {
    policy.set_task(task);
    return policy.prepare(obs).at("observation.language.tokens");
  };
  const auto a = tokens("Move the blue disc onto the green square."), b = tokens("push the block");
  EXPECT_FALSE(a.sizes() == b.sizes() && torch::equal(a, b)) << "two tasks, two token rows";
  EXPECT_LE(a.size(1), 16) << "tokenizer_max_length";
  torch::manual_seed(3);
  policy.set_task("Move the blue disc onto the green square.");
  const auto ca = policy.predict_action_chunk(obs);
  torch::manual_seed(3);
  policy.set_task("push the block");
  const auto cb = policy.predict_action_chunk(obs);
  EXPECT_FALSE(torch::allclose(ca, cb)) << "the same noise, another task: another chunk";
}

// Real-time chunking through the deployment API: the previous chunk's leftover is given in robot
// units, as predict_action_chunk returned it, and goes back through the normalizer into the
// policy's output space; the guided chunk then equals the policy's own guided chunk for the
// normalized leftover, and the step that runs while predicting is pulled toward the leftover's.
// select_action is refused while it is on.
TEST(SmolVLATrain, RealTimeChunkingThroughTheDeploymentApiTakesTheLeftoverInRobotUnits) {
  const fs::path out = train_scratch() / "smolvla_rtc";
  run_train(tiny_smolvla_run(out, 1));
  InferencePolicy policy(out / "checkpoints/last/pretrained_model");
  policy.set_task("Move the blue disc onto the green square.");
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                              {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  torch::manual_seed(5);
  const auto previous = policy.predict_action_chunk(obs);  // (4, 2) in robot units
  ASSERT_EQ(previous.sizes(), (std::vector<int64_t>{4, 2}));
  const auto left = previous.slice(0, 1);  // one step executed, three left
  EXPECT_THROW(policy.predict_action_chunk(obs, left, 1), Error) << "off until set";

  RtcSettings settings;
  settings.execution_horizon = 3;
  settings.max_guidance_weight = 5.0;
  policy.set_rtc(settings);
  torch::manual_seed(9);
  const auto guided = policy.predict_action_chunk(obs, left, 1);
  torch::manual_seed(9);
  const auto plain = policy.predict_action_chunk(obs, torch::Tensor(), 1);  // no leftover: unguided
  ASSERT_EQ(guided.sizes(), plain.sizes());
  EXPECT_GT((guided - plain).abs().max().item<double>(), 1e-4);
  // The same as the policy's own call with the leftover normalized by hand.
  auto& rtc = dynamic_cast<RtcPolicy&>(policy.policy());
  const Batch action{{"action", left.unsqueeze(0)}};
  RtcGuidance g;
  g.prev_chunk_left_over = policy.processors().normalizer.normalize(action).at("action");
  g.inference_delay = 1;
  torch::manual_seed(9);
  const auto by_hand = policy.processors().postprocess_action(rtc.predict_action_chunk_rtc(policy.prepare(obs), g)).squeeze(0);
  EXPECT_TRUE(torch::allclose(guided, by_hand, 1e-6, 1e-6)) << guided << by_hand;
  // The first step, run while predicting, is pulled toward the leftover's first step.
  EXPECT_LT((guided[0] - left[0]).abs().sum().item<double>(), (plain[0] - left[0]).abs().sum().item<double>());
  EXPECT_THROW(policy.select_action(obs), Error);
  EXPECT_THROW(policy.predict_action_chunk(obs, left, -1), Error);
  EXPECT_THROW(policy.predict_action_chunk(obs, left, 1, -2), Error) << "a negative execution horizon";
  EXPECT_THROW(policy.predict_action_chunk(obs, previous.unsqueeze(0), 1), Error) << "(T, A) only";
  policy.set_rtc(std::nullopt);
  EXPECT_EQ(policy.select_action(obs).size(0), 2);
}

// `lerobot-cpp infer --left_over`: the rows of a previous --output not executed yet give the
// deployment API's guided chunk for the same seed; a leftover that does not fit is named.
TEST(SmolVLATrain, InferTakesThePreviousChunksLeftover) {
  const fs::path out = train_scratch() / "smolvla_infer_rtc";
  run_train(tiny_smolvla_run(out, 1));
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                              {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  save_safetensors(out / "obs.safetensors", TensorMap(obs.begin(), obs.end()));
  const std::string base = "infer --policy.path=" + pm.string() + " --observation=" + (out / "obs.safetensors").string() +
                           " --task=\"push the block\"";
  std::string log;
  ASSERT_EQ(testing::run_cli(base + " --seed=3 --output=" + (out / "prev.safetensors").string(), &log), 0) << log;
  const torch::Tensor prev = load_safetensors(out / "prev.safetensors").at("action");
  save_safetensors(out / "left.safetensors", {{"action", prev.slice(0, 1).contiguous()}});
  ASSERT_EQ(testing::run_cli(base + " --seed=4 --left_over=" + (out / "left.safetensors").string() +
                                 " --inference_delay=1 --output=" + (out / "guided.safetensors").string(),
                             &log),
            0)
      << log;
  const torch::Tensor guided = load_safetensors(out / "guided.safetensors").at("action");

  InferencePolicy policy(pm);
  policy.set_task("push the block");
  policy.set_rtc(RtcSettings{});
  torch::manual_seed(4);
  const torch::Tensor want = policy.predict_action_chunk(obs, prev.slice(0, 1), 1);
  EXPECT_TRUE(torch::allclose(guided, want, 1e-5, 1e-6)) << guided << want;
  torch::manual_seed(4);
  EXPECT_FALSE(torch::allclose(guided, policy.predict_action_chunk(obs, torch::Tensor(), 1), 1e-5, 1e-6));

  save_safetensors(out / "long.safetensors", {{"action", torch::zeros({9, 2})}});  // longer than the chunk
  EXPECT_EQ(testing::run_cli(base + " --left_over=" + (out / "long.safetensors").string(), &log), 2) << log;
  EXPECT_NE(log.find("--left_over"), std::string::npos) << log;
  EXPECT_EQ(testing::run_cli(base + " --inference_delay=2", &log), 2) << log;
  EXPECT_NE(log.find("--inference_delay"), std::string::npos) << log;
}

// estimate counts SmolVLA's memory by dtype: with load_vlm_weights the backbone is frozen
// bfloat16 (its weights only) and the expert learns in bfloat16 beside float32 projections (weight,
// gradient and two AdamW moments each, in their own dtype).
TEST(SmolVLATrain, EstimateCountsTheFrozenBackboneAndEachDtype) {
  const std::string flags = testing::flags_without(
      tiny_smolvla_run(train_scratch() / "unused", 1, {"--policy.load_vlm_weights=true"}), {"steps", "output_dir", "log_freq"});
  std::string text;
  ASSERT_EQ(testing::run_cli("estimate" + flags + " --measure_steps=1", &text), 0) << text;
  const auto line_at = text.find("policy smolvla: ");
  ASSERT_NE(line_at, std::string::npos) << text;
  const std::string line = text.substr(line_at, text.find('\n', line_at) - line_at);
  // "... learnable parameters (A M bfloat16, B M float32); frozen: C M bfloat16; ...: N MB per process"
  auto millions = [&](const std::string& after, const std::string& dtype) {
    const auto from = line.find(after);
    EXPECT_NE(from, std::string::npos) << line;
    const auto at = line.find(" M " + dtype, from);
    EXPECT_NE(at, std::string::npos) << line;
    const auto start = line.find_last_of("(:, ", at - 1) + 1;
    return std::stod(line.substr(start, at - start));
  };
  const double learn_bf16 = millions("learnable parameters (", "bfloat16");
  const double learn_f32 = millions("learnable parameters (", "float32");
  const double frozen_bf16 = millions("frozen: ", "bfloat16");
  EXPECT_GT(frozen_bf16, 0.0);
  EXPECT_GT(learn_bf16, 0.0);
  const auto mb_at = line.find(" MB per process");
  ASSERT_NE(mb_at, std::string::npos) << line;
  const double mb = std::stod(line.substr(line.rfind(' ', mb_at - 1) + 1));
  const double want = (4 * (2 * learn_bf16 + 4 * learn_f32) + 2 * frozen_bf16) * 1e6 / (1024 * 1024);
  EXPECT_NEAR(mb, want, 0.01 * want + 0.5) << line;
}

// Fine-tuning a SmolVLA checkpoint on a dataset whose camera has another size: SmolVLA resizes
// every camera itself, so LeRobot accepts it (the checkpoint's shapes stay in config.json).
TEST(SmolVLATrain, FineTunesOnACameraOfAnotherSize) {
  const fs::path base = train_scratch() / "smolvla_ft_base", data = train_scratch() / "reach2d_96";
  run_train(tiny_smolvla_run(base, 1));
  std::string log;
  ASSERT_EQ(testing::run_cli("dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=96 --output_dir=" +
                                 data.string(), &log), 0) << log;
  const fs::path ft = train_scratch() / "smolvla_ft";
  run_train({"--policy.path=" + (base / "checkpoints/last/pretrained_model").string(), "--dataset.root=" + data.string(),
             "--batch_size=2", "--steps=1", "--num_workers=0", "--output_dir=" + ft.string()});
  const Json cfg = Json::parse(read_file(ft / "checkpoints/last/pretrained_model/config.json"));
  EXPECT_EQ(cfg["input_features"]["observation.image"]["shape"], Json({3, 64, 64})) << "the checkpoint's shape";
}

// The resumed run is a copy of the full one stopped after its step-2 checkpoint: SmolVLA's
// scheduler fits its decay into --steps, so a run started with fewer steps has other rates.
TEST(SmolVLATrain, ARunResumedMidwayEndsBitIdentical) {
  const fs::path full = train_scratch() / "smolvla_full", part = train_scratch() / "smolvla_part";
  run_train(tiny_smolvla_run(full, 4, {"--save_freq=2"}));
  fs::copy(full, part, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(part / "checkpoints/000004");
  testing::edit_json(part / "checkpoints/000002/pretrained_model/train_config.json",
                     [&](Json& j) { j["output_dir"] = part.string(); });
  run_train({"--resume=true", "--config_path=" + (part / "checkpoints/000002/pretrained_model").string()});
  const fs::path a = full / "checkpoints/000004", b = part / "checkpoints/000004";
  testing::expect_same_model_and_optimizer(a, b);
  EXPECT_GT(count_different_tensors(full / "checkpoints/000002/pretrained_model/model.safetensors",
                                    a / "pretrained_model/model.safetensors"), 0);
}

}  // namespace
}  // namespace lerobot
