// LoRA through the trainer (issue #41, `--peft.*`), as LeRobot 0.6.2's lerobot_train.py with PEFT:
// a tiny SmolVLA checkpoint fine-tuned with --peft.method_type=LORA --peft.r=4 trains only the
// adapters (every base tensor byte-identical), the checkpoint holds PEFT's adapter folder and
// config.json with use_peft: true (no model.safetensors; the base is adapter_config.json's
// base_model_name_or_path), a resumed run ends bit-identical, the checkpoint acts through
// InferencePolicy, and --peft.* without a pretrained policy, or with EMA, is refused as LeRobot
// refuses it. A new run from an adapter checkpoint trains its adapters further on their base, and
// `lerobot-cpp export --merge_adapters=true` writes a plain policy that acts as the adapters do.
#include <gtest/gtest.h>

#include <fstream>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/inference.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/train/train_setup.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::count_different_tensors;
using testing::run_train;
using testing::train_scratch;

std::string tiny_vlm() { return std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_tiny_vlm"; }

// The pretrained policy the adapters go on: a one-step tiny SmolVLA run, once per process.
const fs::path& base_checkpoint() {
  static const fs::path pm = [] {
    const fs::path out = train_scratch() / "lora_base";
    run_train({"--policy.type=smolvla", "--dataset.root=" + testing::reach2d_dataset().string(),
               "--policy.vlm_model_name=" + tiny_vlm(), "--policy.num_vlm_layers=4", "--policy.chunk_size=4",
               "--policy.n_action_steps=4", "--policy.max_state_dim=8", "--policy.max_action_dim=8",
               "--policy.resize_imgs_with_padding=[32,32]", "--policy.tokenizer_max_length=16",
               "--policy.num_steps=2", "--batch_size=4", "--steps=1", "--num_workers=0", "--seed=7",
               "--output_dir=" + out.string()});
    return out / "checkpoints/last/pretrained_model";
  }();
  return pm;
}

std::vector<std::string> lora_run(const fs::path& out, int64_t steps, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--policy.path=" + base_checkpoint().string(),
                                   "--dataset.root=" + testing::reach2d_dataset().string(),
                                   "--peft.method_type=LORA", "--peft.r=4", "--batch_size=4",
                                   "--steps=" + std::to_string(steps), "--log_freq=1", "--num_workers=0", "--seed=7",
                                   "--output_dir=" + out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A two-step LoRA run's checkpoint (adapters that moved away from lora_B = 0), once per process.
const fs::path& adapter_checkpoint() {
  static const fs::path pm = [] {
    const fs::path out = train_scratch() / "lora_adapters";
    run_train(lora_run(out, 2));
    return out / "checkpoints/last/pretrained_model";
  }();
  return pm;
}

std::map<std::string, torch::Tensor> observation() {
  return {{"observation.state", torch::tensor({0.3f, 0.6f})},
          {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}};
}

// The trainer's setup (policy, adapters, optimizer) stepped by hand: the base parameters stay
// byte-identical, every adapter moves, and only the adapters require gradients.
TEST(PeftTrain, OnlyTheAdaptersTrainAndEveryBaseTensorStaysByteIdentical) {
  const fs::path out = train_scratch() / "lora_setup";
  auto s = make_train_setup(parse_train_config(lora_run(out, 3)), LaunchEnv{}, std::nullopt);
  ASSERT_TRUE(s->peft.has_value());
  EXPECT_EQ(s->peft->r, 4);
  EXPECT_EQ(s->peft->lora_alpha, 8) << "PEFT's default when --peft.lora_alpha is null";
  EXPECT_EQ(s->peft_base, base_checkpoint().string());
  std::map<std::string, torch::Tensor> before;
  int adapters = 0;
  for (const auto& p : s->policy->named_parameters()) {
    before[p.key()] = p.value().detach().clone();
    const bool adapter = lora::is_adapter_parameter(p.key());
    adapters += adapter;
    EXPECT_EQ(p.value().requires_grad(), adapter) << p.key();
  }
  EXPECT_EQ(adapters, 26) << "SmolVLA's default targets: 13 modules, lora_A and lora_B each";
  const TensorMap base_file = load_safetensors(base_checkpoint() / "model.safetensors");
  s->policy->train();
  for (int step = 0; step < 3; ++step) {
    const DataBatch b = s->loader->next();
    Batch batch;
    for (const auto& [k, t] : b.tensors)
      batch[k] = t.scalar_type() == torch::kUInt8 ? t.to(torch::kFloat32).div(255.0) : t;
    const PolicyOutput o = s->policy->forward(s->processors.preprocess(batch, b.tasks));
    o.loss.backward();
    s->optimizer->step();
    s->optimizer->zero_grad();
  }
  int base_changed = 0, adapters_moved = 0, base_checked = 0;
  for (const auto& p : s->policy->named_parameters()) {
    const bool same = torch::equal(before.at(p.key()), p.value().detach());
    if (lora::is_adapter_parameter(p.key())) {
      adapters_moved += !same;
    } else {
      base_changed += !same;
      if (auto it = base_file.find(p.key()); it != base_file.end()) {
        ++base_checked;
        EXPECT_TRUE(torch::equal(it->second, p.value().detach().to(it->second.dtype()))) << p.key();
      }
    }
  }
  EXPECT_EQ(base_changed, 0);
  EXPECT_GT(base_checked, 100) << "the base tensors compared with the pretrained model.safetensors";
  EXPECT_EQ(adapters_moved, 26);
}

TEST(PeftTrain, TheCheckpointHoldsLeRobotsPeftFilesAndActsThroughInferencePolicy) {
  const fs::path out = train_scratch() / "lora_run";
  const TrainResult r = run_train(lora_run(out, 3, {"--save_freq=1"}));
  EXPECT_EQ(r.final_step, 3);
  const fs::path pm = out / "checkpoints/000003/pretrained_model";
  EXPECT_TRUE(fs::exists(pm / "adapter_config.json"));
  EXPECT_TRUE(fs::exists(pm / "adapter_model.safetensors"));
  EXPECT_FALSE(fs::exists(pm / "model.safetensors")) << "PeftModel.save_pretrained writes the adapters only";
  EXPECT_TRUE(fs::exists(pm / "policy_preprocessor.json"));
  const Json config = load_json_or_yaml(pm / "config.json");
  EXPECT_EQ(config["use_peft"], true);
  EXPECT_EQ(config["type"], "smolvla");
  const Json train_config = load_json_or_yaml(pm / "train_config.json");
  EXPECT_EQ(train_config["policy"]["use_peft"], true);
  EXPECT_EQ(train_config["peft"]["r"], 4);
  EXPECT_EQ(train_config["peft"]["method_type"], "LORA");
  const Json ac = load_json_or_yaml(pm / "adapter_config.json");
  EXPECT_EQ(ac["base_model_name_or_path"], base_checkpoint().string());
  EXPECT_EQ(ac["peft_type"], "LORA");
  EXPECT_EQ(ac["r"], 4);
  EXPECT_EQ(ac["lora_alpha"], 8);
  EXPECT_EQ(ac["auto_mapping"]["base_model_class"], "SmolVLAPolicy");
  const Json reference = load_json_or_yaml(std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_lora/adapter_config.json");
  EXPECT_EQ(ac["target_modules"], reference["target_modules"]) << "SmolVLA's default targets";
  const TensorMap a1 = load_safetensors(out / "checkpoints/000001/pretrained_model/adapter_model.safetensors");
  const TensorMap a3 = load_safetensors(pm / "adapter_model.safetensors");
  ASSERT_EQ(a3.size(), 26u);
  for (const auto& [k, v] : a3) EXPECT_EQ(k.rfind("base_model.model.", 0), 0u) << k;
  EXPECT_GT(count_different_tensors(out / "checkpoints/000001/pretrained_model/adapter_model.safetensors",
                                    pm / "adapter_model.safetensors"), 0);

  // Optimizer state only for the adapters (every parameter is in its numbering, as LeRobot's).
  const auto state = load_safetensors(out / "checkpoints/000003/training_state/optimizer_state.safetensors");
  size_t with_state = 0;
  for (const auto& [k, v] : state) with_state += k.size() > 7 && k.compare(k.size() - 7, 7, "exp_avg") == 0;
  EXPECT_EQ(with_state, 26u);

  // The checkpoint acts: base from base_model_name_or_path plus the adapters; another chunk than
  // the base policy's for the same noise.
  InferencePolicy lora(pm), base(base_checkpoint());
  lora.set_task("push the block");
  base.set_task("push the block");
  torch::manual_seed(3);
  const auto with = lora.predict_action_chunk(observation());
  torch::manual_seed(3);
  const auto without = base.predict_action_chunk(observation());
  ASSERT_EQ(with.sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(torch::isfinite(with).all().item<bool>());
  EXPECT_GT((with - without).abs().max().item<double>(), 0.0);
  int adapters = 0;
  for (const auto& p : lora.policy().named_parameters()) adapters += lora::is_adapter_parameter(p.key());
  EXPECT_EQ(adapters, 26);

  // lerobot-cpp eval takes the checkpoint as it is (base + adapters).
  std::string log;
  ASSERT_EQ(testing::run_cli("eval --policy.path=" + pm.string() + " --env.type=reach2d --env.image_size=64 "
                             "--env.episode_length=6 --eval.n_episodes=1 --eval.max_videos=0 --output_dir=" +
                                 (out / "eval").string(),
                             &log),
            0)
      << log;
  EXPECT_TRUE(fs::exists(out / "eval/eval_info.json")) << log;
  // A PEFT checkpoint whose base is gone is refused by name.
  const fs::path moved = train_scratch() / "lora_moved";
  fs::copy(pm, moved, fs::copy_options::recursive);
  testing::edit_json(moved / "adapter_config.json", [](Json& j) { j["base_model_name_or_path"] = "/nonexistent/base"; });
  EXPECT_THROW(InferencePolicy{moved}, Error);
}

TEST(PeftTrain, ARunResumedMidwayEndsBitIdentical) {
  const fs::path full = train_scratch() / "lora_full", part = train_scratch() / "lora_part";
  run_train(lora_run(full, 4, {"--save_freq=2"}));
  fs::copy(full, part, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(part / "checkpoints/000004");
  testing::edit_json(part / "checkpoints/000002/pretrained_model/train_config.json",
                     [&](Json& j) { j["output_dir"] = part.string(); });
  run_train({"--resume=true", "--config_path=" + (part / "checkpoints/000002/pretrained_model").string()});
  const fs::path a = full / "checkpoints/000004", b = part / "checkpoints/000004";
  ASSERT_TRUE(fs::exists(b / "pretrained_model/adapter_model.safetensors"));
  EXPECT_EQ(count_different_tensors(a / "pretrained_model/adapter_model.safetensors",
                                    b / "pretrained_model/adapter_model.safetensors"), 0);
  EXPECT_EQ(count_different_tensors(a / "training_state/optimizer_state.safetensors",
                                    b / "training_state/optimizer_state.safetensors"), 0);
  EXPECT_GT(count_different_tensors(full / "checkpoints/000002/pretrained_model/adapter_model.safetensors",
                                    a / "pretrained_model/adapter_model.safetensors"), 0);
  EXPECT_EQ(load_json_or_yaml(b / "pretrained_model/adapter_config.json")["base_model_name_or_path"],
            base_checkpoint().string());
}

TEST(PeftTrain, PeftWithoutAPretrainedPolicyOrWithEmaIsRefused) {
  std::string log;
  const std::vector<std::string> scratch = {
      "--policy.type=smolvla", "--dataset.root=" + testing::reach2d_dataset().string(),
      "--policy.vlm_model_name=" + tiny_vlm(), "--policy.num_vlm_layers=4", "--peft.r=4", "--steps=1",
      "--num_workers=0", "--output_dir=" + (train_scratch() / "lora_scratch").string()};
  EXPECT_EQ(testing::run_cli("train" + testing::join_args(scratch), &log), 2) << log;
  EXPECT_NE(log.find("Training from scratch using PEFT is unlikely to yield good results"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(train_scratch() / "lora_scratch")) << "refused before any work";

  EXPECT_EQ(testing::run_cli("train" + testing::join_args(lora_run(train_scratch() / "lora_ema", 1, {"--ema.enable=true"})), &log), 2)
      << log;
  EXPECT_NE(log.find("--ema.enable=true is not supported together with PEFT adapters."), std::string::npos) << log;
  EXPECT_EQ(testing::run_cli("train" + testing::join_args(lora_run(train_scratch() / "lora_dora", 1, {"--peft.method_type=MISS"})), &log), 2)
      << log;
  EXPECT_NE(log.find("--peft"), std::string::npos) << log;
}

// LeRobot's `--policy.path=<adapter checkpoint>` without --resume: make_policy loads the base and
// the adapters, the trainer skips wrap_with_peft. The adapters start from the checkpoint's values
// with its settings (--peft.r ignored), only they train, and the new checkpoint names the base.
TEST(PeftTrain, ANewRunFromAnAdapterCheckpointTrainsItsAdaptersFurther) {
  const fs::path& ckpt = adapter_checkpoint();
  const TensorMap trained = load_safetensors(ckpt / "adapter_model.safetensors");
  const std::vector<std::string> args = {"--policy.path=" + ckpt.string(),
                                         "--dataset.root=" + testing::reach2d_dataset().string(), "--batch_size=4",
                                         "--steps=2", "--num_workers=0", "--seed=8"};
  {
    auto with_r = args;
    with_r.push_back("--peft.r=8");
    with_r.push_back("--output_dir=" + (train_scratch() / "lora_again_setup").string());
    auto s = make_train_setup(parse_train_config(with_r), LaunchEnv{}, std::nullopt);
    ASSERT_TRUE(s->peft.has_value());
    EXPECT_EQ(s->peft->r, 4) << "the checkpoint's adapters keep their rank";
    int adapters = 0;
    for (const auto& p : s->policy->named_parameters()) {
      EXPECT_EQ(p.value().requires_grad(), lora::is_adapter_parameter(p.key())) << p.key();
      if (!lora::is_adapter_parameter(p.key())) continue;
      ++adapters;
      const auto it = trained.find("base_model.model." + p.key());
      ASSERT_NE(it, trained.end()) << p.key();
      EXPECT_TRUE(torch::equal(it->second, p.value().detach().cpu())) << p.key() << ": not the checkpoint's adapter";
    }
    EXPECT_EQ(adapters, 26);
  }
  const fs::path out = train_scratch() / "lora_again";
  auto run = args;
  run.push_back("--output_dir=" + out.string());
  EXPECT_EQ(run_train(run).final_step, 2);
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  EXPECT_FALSE(fs::exists(pm / "model.safetensors"));
  EXPECT_EQ(load_json_or_yaml(pm / "adapter_config.json")["base_model_name_or_path"], base_checkpoint().string())
      << "the adapters' base, not the adapter checkpoint";
  EXPECT_EQ(load_json_or_yaml(pm / "adapter_config.json")["r"], 4);
  const Json tc = load_json_or_yaml(pm / "train_config.json");
  EXPECT_EQ(tc["peft"]["r"], 4);
  EXPECT_EQ(tc["policy"]["use_peft"], true);
  EXPECT_GT(count_different_tensors(ckpt / "adapter_model.safetensors", pm / "adapter_model.safetensors"), 0);
  InferencePolicy again(pm);
  again.set_task("push the block");
  EXPECT_TRUE(torch::isfinite(again.predict_action_chunk(observation())).all().item<bool>());
}

// `lerobot-cpp export --merge_adapters=true`: a plain pretrained_model whose chunk equals the
// adapter checkpoint's to 1e-6 (PEFT's merge_and_unload); controls: the base alone (the adapters
// not folded) and lora_alpha doubled (the scale wrong) give other chunks.
TEST(PeftTrain, TheMergedExportActsAsTheAdapterCheckpoint) {
  const fs::path& ckpt = adapter_checkpoint();
  const fs::path dir = train_scratch() / "lora_export", merged = dir / "merged";
  std::string log;
  ASSERT_EQ(testing::run_cli("export --policy.path=" + ckpt.string() + " --merge_adapters=true --output_dir=" +
                                 merged.string(), &log), 0) << log;
  EXPECT_NE(log.find("merged 13 LoRA adapters"), std::string::npos) << log;
  for (const char* gone : {"adapter_config.json", "adapter_model.safetensors", "train_config.json", "lerobot_cpp_config.json"})
    EXPECT_FALSE(fs::exists(merged / gone)) << gone;
  EXPECT_TRUE(fs::exists(merged / "policy_preprocessor.json"));
  EXPECT_TRUE(fs::exists(merged / "policy_postprocessor.json"));
  EXPECT_EQ(load_json_or_yaml(merged / "config.json")["use_peft"], false);
  const TensorMap base_file = load_safetensors(base_checkpoint() / "model.safetensors");
  const TensorMap merged_file = load_safetensors(merged / "model.safetensors");
  ASSERT_EQ(merged_file.size(), base_file.size());
  int folded = 0;
  for (const auto& [k, t] : base_file) {
    ASSERT_TRUE(merged_file.count(k)) << k;
    EXPECT_EQ(merged_file.at(k).dtype(), t.dtype()) << k;
    folded += !torch::equal(merged_file.at(k), t);
  }
  EXPECT_EQ(folded, 13) << "one weight per adapted Linear changes, nothing else";

  auto chunk = [](const fs::path& pm) {
    InferencePolicy p(pm);
    p.set_task("push the block");
    torch::manual_seed(3);
    return p.predict_action_chunk(observation());
  };
  const torch::Tensor with_adapters = chunk(ckpt), from_merged = chunk(merged), base = chunk(base_checkpoint());
  EXPECT_LT((from_merged - with_adapters).abs().max().item<double>(), 1e-6);
  EXPECT_GT((base - with_adapters).abs().max().item<double>(), 1e-4) << "control: the adapters not folded in";
  const fs::path doubled = dir / "alpha16";
  fs::copy(ckpt, doubled, fs::copy_options::recursive);
  testing::edit_json(doubled / "adapter_config.json", [](Json& j) { j["lora_alpha"] = 16; });
  ASSERT_EQ(testing::run_cli("export --policy.path=" + doubled.string() + " --merge_adapters=true --output_dir=" +
                                 (dir / "merged16").string(), &log), 0) << log;
  EXPECT_GT((chunk(dir / "merged16") - with_adapters).abs().max().item<double>(), 1e-5) << "control: the scale wrong";

  // infer takes it as any policy folder.
  save_safetensors(dir / "obs.safetensors", {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                             {"observation.image", torch::full({3, 64, 64}, 90, torch::kUInt8)}});
  ASSERT_EQ(testing::run_cli("infer --policy.path=" + merged.string() + " --observation=" +
                                 (dir / "obs.safetensors").string() + " --task=\"push the block\"", &log), 0) << log;
  EXPECT_NE(log.find("action chunk 4 x 2"), std::string::npos) << log;

  // Usage errors naming the flag and the fix; nothing written.
  EXPECT_EQ(testing::run_cli("export --policy.path=" + base_checkpoint().string() + " --merge_adapters=true --output_dir=" +
                                 (dir / "plain").string(), &log), 2) << log;
  EXPECT_NE(log.find("--policy.path"), std::string::npos) << log;
  EXPECT_NE(log.find("not an adapter checkpoint"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir / "plain"));
  EXPECT_EQ(testing::run_cli("export --policy.path=" + ckpt.string() + " --merge_adapters=true --output_dir=" +
                                 merged.string(), &log), 2) << log;
  EXPECT_NE(log.find("--output_dir"), std::string::npos) << log;
  EXPECT_NE(log.find("already exists"), std::string::npos) << log;
  EXPECT_EQ(testing::run_cli("export --policy.path=" + ckpt.string() + " --output_dir=" + (dir / "x").string(), &log), 2)
      << log;
  EXPECT_NE(log.find("--merge_adapters"), std::string::npos) << log;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace lerobot
