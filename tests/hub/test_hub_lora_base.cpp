// An adapter checkpoint whose base_model_name_or_path is a Hub id (LeRobot's usual case, e.g.
// lerobot/smolvla_base): the base is fetched through the Hub client into $HF_HUB_CACHE, as
// LeRobot's make_policy does with from_pretrained(base_model_name_or_path), by eval and by
// `export --merge_adapters=true`. A tiny ACT with adapters on its feed-forward layers (linear1 and
// linear2 of the encoder, VAE encoder and decoder layer: 6), its base served by the local Hub server.
// And publishing such a run (--policy.push_to_hub, --save_checkpoint_to_hub): LeRobot's
// publish_trained_model(peft_model=...) pushes the adapter files, not the full weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"
#include "lerobot/common/safetensors.h"
#include "lerobot/hub/hashing.h"

namespace lerobot::hub {
namespace {

using testing::HubEnvironment;
using testing::run_cli;
using testing::TempDir;

TEST(HubLoraBase, AnAdapterCheckpointFetchesItsBaseByHubId) {
  TempDir tmp;
  std::string log;
  const fs::path data = tmp.path / "reach2d";
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=3 --env.image_size=64 --output_dir=" +
                        data.string(), &log), 0) << log;
  const fs::path base_run = tmp.path / "base", lora_run = tmp.path / "lora";
  ASSERT_EQ(run_cli("train --dataset.root=" + data.string() + testing::kTinyAct + " --output_dir=" + base_run.string(),
                    &log), 0) << log;
  const fs::path base_pm = base_run / "checkpoints/last/pretrained_model";
  ASSERT_EQ(run_cli("train --policy.path=" + base_pm.string() + " --dataset.root=" + data.string() +
                        " '--peft.target_modules=[linear1,linear2]' --peft.r=2 --batch_size=4 --steps=2 --num_workers=0"
                        " --seed=7 --output_dir=" + lora_run.string(), &log), 0) << log;
  const fs::path pm = lora_run / "checkpoints/last/pretrained_model";
  ASSERT_TRUE(fs::exists(pm / "adapter_config.json")) << log;
  Json ac = Json::parse(read_file(pm / "adapter_config.json"));
  ac["base_model_name_or_path"] = "me/act_base";
  write_file_atomic(pm / "adapter_config.json", ac.dump(2));

  Json repo{{"type", "model"},
            {"id", "me/act_base"},
            {"revisions", Json::array({Json{{"commit", std::string(40, 'd')}, {"dir", base_pm.string()},
                                            {"branches", {"main"}}, {"tags", Json::array()}}})}};
  testing::HubServer server(Json{{"token", "unused"}, {"faults", Json::object()}, {"repos", Json::array({repo})}},
                            tmp.path / "server");
  HubEnvironment env(server.endpoint(), tmp.path / "hf_home");
  ASSERT_EQ(run_cli("eval --policy.path=" + pm.string() + " --env.type=reach2d --env.image_size=64 --env.episode_length=4"
                    " --eval.n_episodes=1 --eval.max_videos=0 --output_dir=" + (tmp.path / "eval").string(), &log), 0)
      << log;
  EXPECT_TRUE(fs::exists(tmp.path / "eval/eval_info.json")) << log;
  int fetched = 0;
  for (const auto& r : server.requests())
    fetched += r.value("path", std::string()).find("me/act_base") != std::string::npos;
  EXPECT_GT(fetched, 0) << "the base came from the Hub";
  ASSERT_EQ(run_cli("export --policy.path=" + pm.string() + " --merge_adapters=true --output_dir=" +
                        (tmp.path / "merged").string(), &log), 0) << log;
  EXPECT_NE(log.find("merged 6 LoRA adapters"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(tmp.path / "merged/model.safetensors"));

  // A Hub id the Hub does not have: refused by name, the adapter file and the key in the message.
  ac["base_model_name_or_path"] = "me/missing_base";
  write_file_atomic(pm / "adapter_config.json", ac.dump(2));
  EXPECT_NE(run_cli("export --policy.path=" + pm.string() + " --merge_adapters=true --output_dir=" +
                        (tmp.path / "merged2").string(), &log), 0) << log;
  EXPECT_NE(log.find("me/missing_base"), std::string::npos) << log;
  EXPECT_NE(log.find("adapter_config.json"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(tmp.path / "merged2"));
}

// A run fine-tuning me/act_base (a Hub id) with --peft.* and --policy.push_to_hub=true
// --save_checkpoint_to_hub=true: the repo's top level holds what LeRobot's publish_trained_model
// pushes for a PeftModel (adapter_config.json + adapter_model.safetensors, config.json with
// use_peft, processors, train_config.json, README.md card) and no model.safetensors anywhere; the
// adapter names its base by Hub id; `infer --policy.path=acme/act-lora` gives the local adapter
// checkpoint's chunk exactly, not the base's.
TEST(HubLoraBase, PushToHubOfAnAdapterRunPublishesTheAdaptersAndTheyLoadByHubId) {
  TempDir tmp;
  std::string log;
  const fs::path data = tmp.path / "reach2d";
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=64 --output_dir=" +
                        data.string(), &log), 0) << log;
  const fs::path base_run = tmp.path / "base";
  ASSERT_EQ(run_cli("train --dataset.root=" + data.string() + testing::kTinyAct + " --output_dir=" + base_run.string(),
                    &log), 0) << log;
  const fs::path base_pm = base_run / "checkpoints/last/pretrained_model";
  const std::string token = "hf_loraPUSHtoken_321";
  Json repo{{"type", "model"},
            {"id", "me/act_base"},
            {"revisions", Json::array({Json{{"commit", std::string(40, 'b')}, {"dir", base_pm.string()},
                                            {"branches", {"main"}}, {"tags", Json::array()}}})}};
  Json config{{"token", "unused"}, {"faults", Json::object()}, {"repos", Json::array({repo})},
              {"users", Json::array({Json{{"token", token}, {"name", "alice"}, {"orgs", Json::array({Json{{"name", "acme"}}})}}})}};
  testing::HubServer server(config, tmp.path / "server");
  HubEnvironment env(server.endpoint(), tmp.path / "hf_home");
  ::setenv("HF_TOKEN", token.c_str(), 1);
  const fs::path run = tmp.path / "lora";
  // A large learning rate so that the adapters move the chunk measurably in two steps.
  ASSERT_EQ(run_cli("train --policy.path=me/act_base --dataset.root=" + data.string() +
                        " --dataset.repo_id=lerobot/reach-test '--peft.target_modules=[linear1,linear2]' --peft.r=2"
                        " --policy.optimizer_lr=0.01 --batch_size=4 --steps=2 --save_freq=1 --num_workers=0 --seed=7"
                        " --policy.push_to_hub=true --save_checkpoint_to_hub=true --policy.repo_id=acme/act-lora"
                        " --output_dir=" + run.string(), &log), 0) << log;
  EXPECT_NE(log.find("Publishing the LoRA adapters"), std::string::npos) << log;
  EXPECT_NE(log.find("Model pushed to " + server.endpoint() + "/acme/act-lora"), std::string::npos) << log;
  EXPECT_EQ(log.find("names a local base_model_name_or_path"), std::string::npos) << log;
  const fs::path pm = run / "checkpoints/last/pretrained_model";
  ASSERT_TRUE(fs::exists(pm / "adapter_model.safetensors")) << log;

  HubClient reader = testing::make_client(server.endpoint(), tmp.path / "reader", token);
  const Snapshot snap = reader.snapshot(tmp.path / "reader/hub", RepoType::kModel, "acme/act-lora", "main", nullptr);
  std::set<std::string> top, want = {"README.md"};
  for (const auto& f : snap.files) {
    EXPECT_EQ(f.find("model.safetensors") == std::string::npos || f.find("adapter_model.safetensors") != std::string::npos, true)
        << "full weights pushed: " << f;
    if (f.find('/') == std::string::npos && f != ".gitattributes") top.insert(f);
  }
  for (const auto& e : fs::directory_iterator(pm))
    if (e.is_regular_file()) want.insert(e.path().filename().string());
  EXPECT_EQ(top, want);
  for (const std::string f : {"adapter_config.json", "adapter_model.safetensors", "config.json", "train_config.json",
                              "policy_preprocessor.json", "policy_postprocessor.json"})
    EXPECT_TRUE(top.count(f)) << f;
  EXPECT_FALSE(top.count("model.safetensors"));
  for (const std::string f : {"adapter_config.json", "adapter_model.safetensors", "config.json"})
    EXPECT_EQ(sha256_file(snap.dir / f), sha256_file(pm / f)) << f;
  const Json ac = Json::parse(read_file(snap.dir / "adapter_config.json"));
  EXPECT_EQ(ac["base_model_name_or_path"], "me/act_base");  // the Hub id, not the cache folder it was fetched to
  EXPECT_EQ(ac["peft_type"], "LORA");
  EXPECT_EQ(Json::parse(read_file(snap.dir / "config.json"))["use_peft"], true);
  EXPECT_NE(read_file(snap.dir / "README.md").find("library_name: lerobot"), std::string::npos);
  // --save_checkpoint_to_hub: each checkpoint verbatim under checkpoints/<step>/, adapters included.
  for (const std::string step : {"000001", "000002"})
    EXPECT_NE(std::find(snap.files.begin(), snap.files.end(), "checkpoints/" + step + "/pretrained_model/adapter_model.safetensors"),
              snap.files.end()) << step;

  // The pushed adapters by Hub id: the adapter repo, then its base by the id it names.
  std::mt19937 rng(11);
  std::vector<uint8_t> image(64 * 64 * 3);  // HWC
  for (auto& v : image) v = static_cast<uint8_t>(rng() % 256);
  std::vector<float> state = {0.3f, -0.2f};
  const fs::path obs_file = tmp.path / "obs.safetensors";
  write_safetensors(obs_file, {{"observation.image", DType::kU8, {64, 64, 3}, image.data(), image.size()},
                               {"observation.state", DType::kF32, {2}, state.data(), state.size() * sizeof(float)}});
  auto chunk = [&](const std::string& policy, const std::string& name) {
    const fs::path out = tmp.path / (name + ".safetensors");
    EXPECT_EQ(run_cli("infer --policy.path=" + policy + " --observation=" + obs_file.string() + " --output=" + out.string(),
                      &log), 0) << log;
    const SafetensorsReader r(out);
    const TensorView& a = r.at("action");
    EXPECT_EQ(a.dtype, DType::kF32);
    const float* f = reinterpret_cast<const float*>(a.data);
    return std::make_pair(a.shape, std::vector<float>(f, f + a.numel()));
  };
  const auto hub = chunk("acme/act-lora", "hub"), local = chunk(pm.string(), "local"), base = chunk(base_pm.string(), "base");
  EXPECT_EQ(hub.first, (std::vector<int64_t>{5, 2}));
  ASSERT_EQ(hub.first, local.first);
  ASSERT_EQ(hub.first, base.first);
  EXPECT_EQ(hub.second, local.second);  // bit for bit
  double from_base = 0;
  for (size_t i = 0; i < hub.second.size(); ++i) from_base = std::max(from_base, std::fabs(double(hub.second[i]) - base.second[i]));
  EXPECT_GT(from_base, 1e-4) << "the adapters were not applied";

  // A base given as a local folder: published as LeRobot would (the path in adapter_config.json),
  // with a warning that only that machine can load it.
  ASSERT_EQ(run_cli("train --policy.path=" + base_pm.string() + " --dataset.root=" + data.string() +
                        " '--peft.target_modules=[linear1,linear2]' --peft.r=2 --batch_size=4 --steps=1 --num_workers=0"
                        " --policy.push_to_hub=true --policy.repo_id=acme/act-lora-local --output_dir=" +
                        (tmp.path / "lora_local").string(), &log), 0) << log;
  EXPECT_NE(log.find("names a local base_model_name_or_path '" + base_pm.string() + "'"), std::string::npos) << log;
  const Snapshot local_snap =
      reader.snapshot(tmp.path / "reader/hub", RepoType::kModel, "acme/act-lora-local", "main", nullptr);
  EXPECT_EQ(Json::parse(read_file(local_snap.dir / "adapter_config.json"))["base_model_name_or_path"], base_pm.string());
  ::unsetenv("HF_TOKEN");
}

}  // namespace
}  // namespace lerobot::hub
