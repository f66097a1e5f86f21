// π0 and π0.5 through the command line at small sizes (LEROBOT_PI_ARCH: the same model with
// narrow, 2-layer widths) on the generated reach2d dataset, PaliGemma's tokenizer name resolved
// from a Hugging Face cache holding the reduced Gemma tokenizer kept in tests/policies/data: the
// checkpoint has LeRobot's files and processor steps, every parameter LeRobot trains moves, a
// resumed run ends bit-identical, `eval` runs the env with its task text, `infer` and the
// deployment API act, and the task text reaches the policy.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/inference.h"
#include "pi_train_helpers.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::PiEnv;
using testing::run_train;
using testing::tiny_pi_run;
using testing::train_scratch;

// The policy's chunk for one reach2d observation (2-dim state, a 64x64 camera) and the task text:
// 4 finite 2-dim actions.
void expect_chunk_on_reach2d(InferencePolicy& policy) {
  policy.set_task("push the block");
  const std::map<std::string, torch::Tensor> obs = {
      {"observation.state", torch::tensor({0.3f, 0.6f})}, {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  const auto chunk = policy.predict_action_chunk(obs);
  EXPECT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(torch::isfinite(chunk).all().item<bool>());
}

std::vector<std::string> step_names(const fs::path& file) {
  std::ifstream in(file);
  const Json j = Json::parse(in);
  std::vector<std::string> names;
  for (const auto& s : j["steps"]) names.push_back(s["registry_name"]);
  return names;
}

class PiTrain : public ::testing::TestWithParam<std::string> {
 protected:
  PiEnv env_;
};

TEST_P(PiTrain, TheCheckpointIsLeRobotsAndWhatLeRobotTrainsMoves) {
  const fs::path out = train_scratch() / (GetParam() + "_layout");
  run_train(tiny_pi_run(GetParam(), out, 3, {"--save_freq=1"}));
  const auto w1 = testing::checkpoint_weights(out, 1), w3 = testing::checkpoint_weights(out, 3);
  std::vector<std::string> still;
  for (const auto& [k, v] : w1)
    if (torch::equal(v, w3.at(k))) still.push_back(k);
  // What gets no gradient in LeRobot's model too: the two lm_heads, the language model's final
  // norm and its last layer's parts that only feed the prefix's unread output.
  for (const auto& k : still) {
    const bool unread = k.find("lm_head") != std::string::npos || k.find("language_model.norm") != std::string::npos ||
                        (k.find("language_model.layers.1.") != std::string::npos &&
                         (k.find(".mlp.") != std::string::npos || k.find("post_attention_layernorm") != std::string::npos ||
                          k.find("o_proj") != std::string::npos));
    EXPECT_TRUE(unread) << k << " did not move";
  }
  EXPECT_GT(w1.size(), still.size() + 50);

  const fs::path pm = out / "checkpoints/000003/pretrained_model";
  const Json cfg = Json::parse(read_file(pm / "config.json"));
  EXPECT_EQ(cfg["type"], GetParam());
  const std::vector<std::string> pre = step_names(pm / "policy_preprocessor.json");
  if (GetParam() == "pi0")
    EXPECT_EQ(pre, (std::vector<std::string>{"rename_observations_processor", "to_batch_processor", "pi0_new_line_processor",
                                             "tokenizer_processor", "device_processor", "relative_actions_processor",
                                             "normalizer_processor"}));
  else
    EXPECT_EQ(pre, (std::vector<std::string>{"rename_observations_processor", "to_batch_processor",
                                             "relative_actions_processor", "normalizer_processor",
                                             "pi05_prepare_state_tokenizer_processor_step", "tokenizer_processor",
                                             "device_processor"}));
  EXPECT_EQ(step_names(pm / "policy_postprocessor.json"),
            (std::vector<std::string>{"unnormalizer_processor", "absolute_actions_processor", "device_processor"}));
  const auto saved = load_safetensors(pm / "model.safetensors");
  EXPECT_TRUE(saved.count("model.paligemma_with_expert.paligemma.model.vision_tower.vision_model.embeddings.patch_embedding.weight"));
  EXPECT_TRUE(saved.count("model.paligemma_with_expert.gemma_expert.lm_head.weight")) << "LeRobot saves it too";
}

// A copy of the full run stopped after its step-2 checkpoint, resumed: the same weights and
// optimizer state at step 4 (π's scheduler fits its decay into --steps, so the copy keeps them).
TEST_P(PiTrain, ARunResumedMidwayEndsBitIdentical) {
  const fs::path full = train_scratch() / (GetParam() + "_full"), part = train_scratch() / (GetParam() + "_part");
  run_train(tiny_pi_run(GetParam(), full, 4, {"--save_freq=2"}));
  fs::copy(full, part, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(part / "checkpoints/000004");
  testing::edit_json(part / "checkpoints/000002/pretrained_model/train_config.json",
                     [&](Json& j) { j["output_dir"] = part.string(); });
  run_train({"--resume=true", "--config_path=" + (part / "checkpoints/000002/pretrained_model").string()});
  testing::expect_same_model_and_optimizer(full / "checkpoints/000004", part / "checkpoints/000004");
}

TEST_P(PiTrain, EvalInferAndTheDeploymentApiAct) {
  const fs::path out = train_scratch() / (GetParam() + "_act");
  run_train(tiny_pi_run(GetParam(), out, 2));
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  testing::expect_eval_on_reach2d(pm, out / "eval");

  std::string log;
  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                              {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  save_safetensors(out / "obs.safetensors", TensorMap(obs.begin(), obs.end()));
  ASSERT_EQ(testing::run_cli("infer --policy.path=" + pm.string() + " --observation=" + (out / "obs.safetensors").string() +
                                 " --task=\"push the block\" --seed=3 --output=" + (out / "chunk.safetensors").string(),
                             &log),
            0)
      << log;
  const torch::Tensor chunk = load_safetensors(out / "chunk.safetensors").at("action");
  EXPECT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{4, 2}));

  InferencePolicy policy(pm);
  policy.set_task("push the block");
  torch::manual_seed(3);
  const auto mine = policy.predict_action_chunk(obs);
  EXPECT_TRUE(torch::isfinite(mine).all().item<bool>());
  // Another task, the same noise: another chunk (the prompt reaches the model).
  torch::manual_seed(3);
  policy.set_task("Move the blue disc onto the green square.");
  EXPECT_FALSE(torch::allclose(mine, policy.predict_action_chunk(obs)));
  // Real-time chunking: a leftover pulls the first step toward it.
  policy.set_task("push the block");
  RtcSettings settings;
  settings.execution_horizon = 3;
  policy.set_rtc(settings);
  torch::manual_seed(9);
  const auto guided = policy.predict_action_chunk(obs, mine.slice(0, 1), 1);
  torch::manual_seed(9);
  const auto plain = policy.predict_action_chunk(obs, torch::Tensor(), 1);
  EXPECT_LT((guided[0] - mine[1]).abs().sum().item<double>(), (plain[0] - mine[1]).abs().sum().item<double>());
  policy.set_rtc(std::nullopt);
  EXPECT_EQ(policy.select_action(obs).size(0), 2);
}

// LeRobot's documented fine-tuning form: --policy.type=pi05 --policy.pretrained_path=<base>. The
// config comes from the command line (here another num_inference_steps and chunk length than the
// base's: they size no weight), the weights from the base; the frozen vision tower keeps them.
TEST_P(PiTrain, PretrainedPathWithTheTypeOnTheCommandLineFineTunesTheBase) {
  const fs::path base = train_scratch() / (GetParam() + "_base"), ft = train_scratch() / (GetParam() + "_ft");
  run_train(tiny_pi_run(GetParam(), base, 1));
  const fs::path pm = base / "checkpoints/last/pretrained_model";
  auto args = tiny_pi_run(GetParam(), ft, 2,
                          {"--policy.pretrained_path=" + pm.string(), "--policy.freeze_vision_encoder=true"});
  for (auto& a : args) {
    if (a == "--policy.chunk_size=4") a = "--policy.chunk_size=3";
    if (a == "--policy.n_action_steps=4") a = "--policy.n_action_steps=3";
    if (a == "--policy.num_inference_steps=2") a = "--policy.num_inference_steps=3";
  }
  run_train(args);
  const auto before = load_safetensors(pm / "model.safetensors");
  const auto after = load_safetensors(ft / "checkpoints/last/pretrained_model/model.safetensors");
  int vision = 0, moved = 0;
  for (const auto& [k, v] : after) {
    if (k.find("vision_tower") != std::string::npos) {
      EXPECT_TRUE(torch::equal(v, before.at(k))) << k;
      ++vision;
    } else {
      moved += !torch::equal(v, before.at(k));
    }
  }
  EXPECT_GT(vision, 10);
  EXPECT_GT(moved, 10);
  EXPECT_EQ(Json::parse(read_file(ft / "checkpoints/last/pretrained_model/config.json"))["chunk_size"], 3);
}

// The published bases' own features (lerobot/pi05_base and pi0_base: three cameras base_0_rgb,
// left_wrist_0_rgb, right_wrist_0_rgb, a 32-dim state and action) fine-tuned with --policy.path on
// reach2d's one camera and 2-dim state, as LeRobot 0.6.2 does it: make_policy keeps the base's
// input features and takes the action from the dataset (policies/factory.py, make_policy:
// `cfg.output_features = ...ACTION...; if not cfg.input_features: ...`); _preprocess_images
// (modeling_pi05.py / modeling_pi0.py) fills each camera absent from the batch with a -1 image and
// a false mask and raises "All image features are missing from the batch" when none is there; the
// state and action are zero-padded to max_state_dim / max_action_dim (pad_vector). Without a
// --rename_map no base camera is in the dataset: refused before step 1 (exit 3) naming the map;
// with one the run trains, keeps the base's features in config.json, and eval and the deployment
// API run the checkpoint on reach2d's observation (the two other cameras absent, the state 2-dim).
TEST_P(PiTrain, ThePublishedBasesThreeCamerasFineTuneOnAOneCameraDataset) {
  const fs::path made = train_scratch() / (GetParam() + "_made32"), base = train_scratch() / (GetParam() + "_base3");
  auto made_args = tiny_pi_run(GetParam(), made, 1);
  for (auto& a : made_args) {
    if (a == "--policy.max_state_dim=8") a = "--policy.max_state_dim=32";
    if (a == "--policy.max_action_dim=8") a = "--policy.max_action_dim=32";
  }
  run_train(made_args);
  // The base: config.json and model.safetensors only (no processor files), the published features.
  fs::create_directories(base);
  const fs::path made_pm = made / "checkpoints/last/pretrained_model";
  fs::copy_file(made_pm / "model.safetensors", base / "model.safetensors", fs::copy_options::overwrite_existing);
  Json cfg = Json::parse(read_file(made_pm / "config.json"));
  const std::vector<std::string> cams = {"observation.images.base_0_rgb", "observation.images.left_wrist_0_rgb",
                                         "observation.images.right_wrist_0_rgb"};
  cfg["input_features"] = Json::object();
  for (const auto& c : cams) cfg["input_features"][c] = {{"type", "VISUAL"}, {"shape", {3, 224, 224}}};
  cfg["input_features"]["observation.state"] = {{"type", "STATE"}, {"shape", {32}}};
  cfg["output_features"] = {{"action", {{"type", "ACTION"}, {"shape", {32}}}}};
  write_file_atomic(base / "config.json", cfg.dump(4));

  const std::string common = " --policy.path=" + base.string() + " --dataset.root=" +
                             testing::reach2d_dataset().string() +
                             " --batch_size=4 --steps=2 --log_freq=1 --num_workers=0 --seed=7";
  std::string log;
  EXPECT_EQ(testing::run_cli("train" + common + " --output_dir=" + (train_scratch() / (GetParam() + "_nomap")).string(),
                             &log),
            3)
      << log;
  EXPECT_NE(log.find("All image features are missing from the batch"), std::string::npos) << log;
  EXPECT_NE(log.find("--rename_map='{\"observation.image\": \"observation.images.base_0_rgb\"}'"), std::string::npos)
      << log;

  const fs::path ft = train_scratch() / (GetParam() + "_ft3");
  const std::string map = " --rename_map='{\"observation.image\": \"observation.images.left_wrist_0_rgb\"}'";
  ASSERT_EQ(testing::run_cli("train" + common + map + " --output_dir=" + ft.string(), &log), 0) << log;
  EXPECT_NE(log.find("not observation.images.base_0_rgb, observation.images.right_wrist_0_rgb: each is filled with a "
                     "-1 image masked out"),
            std::string::npos)
      << log;
  const fs::path pm = ft / "checkpoints/last/pretrained_model";
  const Json saved = Json::parse(read_file(pm / "config.json"));
  for (const auto& c : cams) EXPECT_EQ(saved["input_features"][c]["shape"], Json({3, 224, 224})) << c;
  EXPECT_EQ(saved["input_features"]["observation.state"]["shape"], Json({32}));
  EXPECT_FALSE(saved["input_features"].contains("observation.image"));
  EXPECT_EQ(saved["output_features"]["action"]["shape"], Json({2}));  // the dataset's, as make_policy sets it
  const auto before = load_safetensors(base / "model.safetensors"), after = load_safetensors(pm / "model.safetensors");
  int moved = 0;
  for (const auto& [k, v] : after) moved += !torch::equal(v, before.at(k));
  EXPECT_GT(moved, 10);

  ASSERT_EQ(testing::run_cli("eval --policy.path=" + pm.string() + map +
                                 " --env.type=reach2d --env.image_size=64 --eval.n_episodes=1 --eval.batch_size=1"
                                 " --env.episode_length=6 --output_dir=" + (ft / "eval").string(),
                             &log),
            0)
      << log;
  InferencePolicy policy(pm);
  expect_chunk_on_reach2d(policy);
}

// A state wider than max_state_dim, as LeRobot 0.6.2 takes it: π0.5 reads the state only as prompt
// text (Pi05PrepareStateTokenizerProcessorStep bins every entry; pad_vector leaves a wider vector
// as it is and the model never projects it), so a base whose config keeps a 1-dim state feature
// (max_state_dim 1) fine-tunes on reach2d's 2-dim state (make_policy keeps the base's features,
// the normalizer takes the dataset's 2-dim stats) and the result acts on a 2-dim observation. π0
// projects the padded state (state_proj, max_state_dim inputs), where LeRobot raises on a matrix
// product: refused by name before anything is built (exit 2).
TEST_P(PiTrain, AStateWiderThanMaxStateDimIsPromptTextForPi05AndRefusedForPi0) {
  auto args = tiny_pi_run(GetParam(), train_scratch() / (GetParam() + "_wide_base"), 1);
  for (auto& a : args)
    if (a == "--policy.max_state_dim=8") a = "--policy.max_state_dim=1";
  std::string cmd = "train", log;
  for (const auto& a : args) cmd += " " + a;
  if (GetParam() == "pi0") {
    EXPECT_EQ(testing::run_cli(cmd, &log), 2) << log;
    EXPECT_NE(log.find("observation.state has 2 dimensions but π0 zero-pads it to max_state_dim=1"), std::string::npos)
        << log;
    EXPECT_NE(log.find("--policy.max_state_dim=2"), std::string::npos) << log;
    return;
  }
  ASSERT_EQ(testing::run_cli(cmd, &log), 0) << log;
  // The base: the trained folder with its state feature narrowed to 1 (a base made on other data).
  const fs::path base = train_scratch() / "pi05_wide_base/checkpoints/last/pretrained_model";
  Json cfg = Json::parse(read_file(base / "config.json"));
  ASSERT_EQ(cfg["max_state_dim"], 1);
  cfg["input_features"]["observation.state"]["shape"] = {1};
  write_file_atomic(base / "config.json", cfg.dump(4));

  const fs::path ft = train_scratch() / "pi05_wide_ft";
  ASSERT_EQ(testing::run_cli("train --policy.path=" + base.string() + " --dataset.root=" +
                                 testing::reach2d_dataset().string() +
                                 " --batch_size=4 --steps=2 --log_freq=1 --num_workers=0 --seed=7 --output_dir=" +
                                 ft.string(),
                             &log),
            0)
      << log;
  const fs::path pm = ft / "checkpoints/last/pretrained_model";
  EXPECT_EQ(Json::parse(read_file(pm / "config.json"))["input_features"]["observation.state"]["shape"], Json({1}));
  InferencePolicy policy(pm);
  expect_chunk_on_reach2d(policy);
  // The prompt carries both entries: another second entry gives other tokens.
  const auto prompts = [&](float second) {
    const auto& lang = *policy.processors().language;
    Batch b = {{"observation.state", torch::tensor({{0.3f, second}})}};
    return lang.prompts({"push the block"}, policy.processors().normalizer.normalize(b))[0];
  };
  EXPECT_NE(prompts(0.6f), prompts(-0.6f));
}

// Over two processes (Gloo) with gradient checkpointing, sharded (--parallelism.dp_shard=2: each
// joint layer pair and SigLIP layer gathered around its forward and again for its recomputation)
// and DDP give the same parameter update (each rank draws the same noise and time in both runs),
// while one process on half the global batch does not.
TEST_P(PiTrain, ShardedOverTwoProcessesMatchesDdpWithGradientCheckpointing) {
  const std::string sgd =
      " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.lr=1e-2 --optimizer.weight_decay=0"
      " --optimizer.grad_clip_norm=1 --policy.gradient_checkpointing=true";
  auto cli_run = [&](const std::string& name, int64_t steps, const std::string& extra) {
    std::string args = "train";
    for (const auto& a : tiny_pi_run(GetParam(), train_scratch() / (GetParam() + "_" + name), steps)) args += " " + a;
    std::string log;
    EXPECT_EQ(testing::run_shell("OMP_NUM_THREADS=1 " + std::string(LEROBOT_CLI) + " " + args + sgd + extra, &log), 0) << name << ":\n" << log;
    return load_safetensors(train_scratch() / (GetParam() + "_" + name) / "checkpoints/last/pretrained_model/model.safetensors");
  };
  const auto init = cli_run("shard_init", 1, " --optimizer.lr=0");
  const auto ddp = cli_run("shard_ddp", 3, " --num_processes=2");
  const auto sharded = cli_run("shard_fsdp", 3, " --num_processes=2 --parallelism.dp_shard=2");
  const auto half = cli_run("shard_half", 3, "");
  double num = 0, den = 0, half_num = 0;
  for (const auto& [k, v0] : init) {
    const auto a = v0.to(torch::kDouble);
    const auto dd = ddp.at(k).to(torch::kDouble) - a, ds = sharded.at(k).to(torch::kDouble) - a,
               dh = half.at(k).to(torch::kDouble) - a;
    num += (dd - ds).pow(2).sum().item<double>();
    half_num += (dd - dh).pow(2).sum().item<double>();
    den += dd.pow(2).sum().item<double>();
  }
  ASSERT_GT(den, 0.0);
  std::printf("%s: relative update difference sharded vs DDP %.3g, one process on half the batch %.3g\n",
              GetParam().c_str(), std::sqrt(num / den), std::sqrt(half_num / den));
  EXPECT_LE(std::sqrt(num / den), 1e-5);
  EXPECT_GT(std::sqrt(half_num / den), 1e-3);
}

// LeRobot's LoRA fine-tune of a π checkpoint (--policy.path=<base> --peft.r=4, no
// --peft.target_modules): the policy's own default targets (the expert's q/v projections of both
// layers and the projections its regex names: π0 9 modules, π0.5 6, as LeRobot + PEFT pick them in
// tests/policies/data/pi_lora), only the adapters train, the checkpoint holds PEFT's files, and the
// deployment API acts with them (another chunk than the base's for the same noise).
TEST_P(PiTrain, LoraWithThePolicysDefaultTargetsTrainsOnlyItsAdapters) {
  const fs::path base = train_scratch() / (GetParam() + "_lora_base"), out = train_scratch() / (GetParam() + "_lora");
  run_train(tiny_pi_run(GetParam(), base, 1));
  const fs::path base_pm = base / "checkpoints/last/pretrained_model";
  auto args = tiny_pi_run(GetParam(), out, 2, {"--peft.r=4", "--policy.optimizer_lr=0.01"});
  args.erase(std::remove(args.begin(), args.end(), "--policy.type=" + GetParam()), args.end());
  args.push_back("--policy.path=" + base_pm.string());
  run_train(args);
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  EXPECT_FALSE(fs::exists(pm / "model.safetensors"));
  EXPECT_EQ(Json::parse(read_file(pm / "config.json"))["use_peft"], true);
  const Json ac = Json::parse(read_file(pm / "adapter_config.json"));
  EXPECT_EQ(ac["target_modules"],
            R"((.*\.gemma_expert\..*\.self_attn\.(q|v)_proj|model\.(state_proj|action_in_proj|action_out_proj|action_time_mlp_in|action_time_mlp_out)))");
  EXPECT_EQ(ac["r"], 4);
  EXPECT_EQ(ac["base_model_name_or_path"], base_pm.string());
  const auto adapters = load_safetensors(pm / "adapter_model.safetensors");
  std::set<std::string> modules;
  for (const auto& [k, v] : adapters) {
    const auto at = k.find(".lora_");
    ASSERT_NE(at, std::string::npos) << k;
    modules.insert(k.substr(0, at));
    if (k.find(".lora_B.") != std::string::npos) {
      EXPECT_GT(v.abs().max().item<double>(), 0.0) << k << " did not move from PEFT's zero";
    }
  }
  const std::string e = "base_model.model.model.paligemma_with_expert.gemma_expert.model.layers.";
  std::set<std::string> want = {"base_model.model.model.action_in_proj", "base_model.model.model.action_out_proj"};
  for (const char* l : {"0", "1"})
    for (const char* qv : {"q", "v"}) want.insert(e + l + ".self_attn." + qv + "_proj");
  if (GetParam() == "pi0")
    for (const char* m : {"state_proj", "action_time_mlp_in", "action_time_mlp_out"}) want.insert(std::string("base_model.model.model.") + m);
  EXPECT_EQ(modules, want);
  EXPECT_EQ(adapters.size(), 2 * want.size());

  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                              {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  InferencePolicy with_adapters(pm), plain(base_pm);
  with_adapters.set_task("push the block");
  plain.set_task("push the block");
  torch::manual_seed(3);
  const auto a = with_adapters.predict_action_chunk(obs);
  torch::manual_seed(3);
  const auto b = plain.predict_action_chunk(obs);
  EXPECT_TRUE(torch::isfinite(a).all().item<bool>());
  EXPECT_GT((a - b).abs().max().item<double>(), 1e-4) << "the adapters did not reach the chunk";
}

INSTANTIATE_TEST_SUITE_P(Types, PiTrain, ::testing::Values("pi0", "pi05"));

// π0.5's training-time real-time chunking (LeRobot's --policy.rtc_training_max_delay): training
// keeps a random clean prefix of 0..2 actions per sample, the checkpoint records the delay, and
// the checkpoint predicts in RTC mode "trained": the first inference_delay actions are the
// leftover's, the rest denoised after them. Values against LeRobot: PiTrainedRtcReference.
TEST(PiTrainTrainedRtc, TrainsSavesAndPredictsWithAHardPrefix) {
  PiEnv env;
  const fs::path out = train_scratch() / "pi05_trained_rtc";
  run_train(tiny_pi_run("pi05", out, 2, {"--policy.rtc_training_max_delay=2"}));
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  const Json cfg = Json::parse(read_file(pm / "config.json"));
  EXPECT_EQ(cfg["rtc_training_max_delay"], 2);

  std::map<std::string, torch::Tensor> obs = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                              {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
  InferencePolicy policy(pm);
  policy.set_task("push the block");
  RtcSettings trained;
  trained.trained = true;
  policy.set_rtc(trained);
  const auto left_over = torch::tensor({{0.1f, -0.2f}, {0.15f, -0.1f}, {0.2f, 0.0f}});
  torch::manual_seed(4);
  const auto chunk = policy.predict_action_chunk(obs, left_over, 2);
  ASSERT_EQ(chunk.sizes().vec(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(torch::allclose(chunk.slice(0, 0, 2), left_over.slice(0, 0, 2), 1e-4, 1e-5)) << chunk;
  EXPECT_TRUE(torch::isfinite(chunk).all().item<bool>());
  EXPECT_THROW(policy.predict_action_chunk(obs, left_over, 3), Error);  // beyond the trained delay

  std::string log;  // LeRobot's 0 <= delay < chunk_size
  auto args = tiny_pi_run("pi05", train_scratch() / "pi05_trained_rtc_bad", 1, {"--policy.rtc_training_max_delay=4"});
  std::string line = "train";
  for (const auto& a : args) line += " " + a;
  EXPECT_NE(testing::run_cli(line, &log), 0);
  EXPECT_NE(log.find("rtc_training_max_delay"), std::string::npos) << log;
}

// `estimate` at LeRobot's full sizes, on this CPU, in well under a second: LeRobot's parameter
// counts (PiSizing.* pins them against its code), the memory table, and no timed step.
TEST(PiEstimate, FullSizeCountsAndMemoryWithoutBuildingTheModel) {
  ASSERT_EQ(std::getenv("LEROBOT_PI_ARCH"), nullptr);
  for (const auto& [type, count] : std::vector<std::pair<std::string, std::string>>{{"pi05", "4143404816"}, {"pi0", "4028019472"}}) {
    std::string out;
    ASSERT_EQ(testing::run_cli("estimate --policy.type=" + type + " --batch_size=8", &out), 0) << out;
    EXPECT_NE(out.find(count + " parameters"), std::string::npos) << out;
    EXPECT_NE(out.find("activations, gradient_checkpointing=true"), std::string::npos) << out;
    EXPECT_NE(out.find("not timed: "), std::string::npos) << out;  // no GPU here, or no dataset on a GPU
  }
}

}  // namespace
}  // namespace lerobot
