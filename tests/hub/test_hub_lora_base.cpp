// An adapter checkpoint whose base_model_name_or_path is a Hub id (LeRobot's usual case, e.g.
// lerobot/smolvla_base): the base is fetched through the Hub client into $HF_HUB_CACHE, as
// LeRobot's make_policy does with from_pretrained(base_model_name_or_path), by eval and by
// `export --merge_adapters=true`. A tiny ACT with adapters on its feed-forward layers (linear1 and
// linear2 of the encoder, VAE encoder and decoder layer: 6), its base served by the local Hub server.
#include <gtest/gtest.h>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"

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

}  // namespace
}  // namespace lerobot::hub
