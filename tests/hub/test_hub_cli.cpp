// `lerobot-cpp train` (the built executable) with Hub ids against the local Hub server (tests/hub/hub_server.py):
// --dataset.repo_id into $HF_LEROBOT_HOME/hub, --policy.path=org/name into $HF_HUB_CACHE, and
// the same run again offline, served from the cache.
#include <gtest/gtest.h>

#include <cstdlib>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

using hub::testing::HubEnvironment;
using hub::testing::kTinyAct;
using hub::testing::run_cli;
using hub::testing::TempDir;

TEST(HubTrain, DatasetAndPolicyByHubIdThenOffline) {
  TempDir tmp;
  const fs::path scratch = tmp.path;
  const fs::path data = scratch / "reach2d";
  const fs::path ckpt = scratch / "base";
  std::string log;
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=3 --env.image_size=64 --output_dir=" + data.string(), &log), 0) << log;
  ASSERT_EQ(run_cli("train" + std::string(kTinyAct) + " --dataset.root=" + data.string() + " --output_dir=" + ckpt.string(), &log), 0) << log;
  const std::string kData = std::string(40, 'd'), kModel = std::string(40, 'e');
  Json config{{"token", "unused"},
              {"faults", Json::object()},
              {"repos", Json::array({Json{{"type", "dataset"},
                                          {"id", "lerobot/reach-test"},
                                          {"revisions", Json::array({Json{{"commit", kData},
                                                                          {"dir", data.string()},
                                                                          {"branches", {"main"}},
                                                                          {"tags", {"v2.1", "v3.0"}}}})}},
                                     Json{{"type", "model"},
                                          {"id", "lerobot/act-reach"},
                                          {"revisions", Json::array({Json{{"commit", kModel},
                                                                          {"dir", (ckpt / "checkpoints/last/pretrained_model").string()},
                                                                          {"branches", {"main"}}}})}}})}};
  const fs::path home = scratch / "hf_home";
  const fs::path snap = home / "lerobot/hub/datasets--lerobot--reach-test/snapshots" / kData;
  const fs::path model_snap = home / "hub/models--lerobot--act-reach/snapshots" / kModel;
  {
    testing::HubServer server(config, scratch / "server");
    HubEnvironment env(server.endpoint(), home);
    ASSERT_EQ(run_cli("train" + std::string(kTinyAct) + " --output_dir=" + (scratch / "run1").string() +
                          " --dataset.repo_id=lerobot/reach-test --dataset.episodes=[0,2]", &log), 0) << log;
    EXPECT_NE(log.find("revision v3.0"), std::string::npos) << log;
    // info.json is a relative link to its blob, whose lock huggingface_hub's way sits in .locks/.
    const fs::path link = fs::read_symlink(snap / "meta/info.json");
    EXPECT_EQ(link.parent_path().generic_string(), "../../../blobs");
    EXPECT_TRUE(fs::exists(home / "lerobot/hub/.locks/datasets--lerobot--reach-test" / (link.filename().string() + ".lock")));
    EXPECT_EQ(read_file(home / "lerobot/hub/datasets--lerobot--reach-test/refs/v3.0"), kData);
    EXPECT_EQ(read_file(snap / "meta/info.json"), read_file(data / "meta/info.json"));
    EXPECT_TRUE(fs::exists(snap / "data/chunk-000/file-000.parquet")) << log;
    EXPECT_FALSE(fs::exists(home / "hub")) << "a dataset went to $HF_HUB_CACHE";

    // Fine-tuning from the model repo: its files land in $HF_HUB_CACHE/models--lerobot--act-reach.
    ASSERT_EQ(run_cli("train --policy.path=lerobot/act-reach --dataset.repo_id=lerobot/reach-test --output_dir=" +
                          (scratch / "run2").string() + " --steps=1 --batch_size=4 --num_workers=0", &log), 0) << log;
    EXPECT_NE(log.find("Fine-tuning from " + model_snap.string()), std::string::npos) << log;
    EXPECT_EQ(read_file(model_snap / "model.safetensors"),
              read_file(ckpt / "checkpoints/last/pretrained_model/model.safetensors"));
    EXPECT_TRUE(fs::exists(model_snap / "config.json"));
  }  // the server is gone
  HubEnvironment env("http://127.0.0.1:1", home);
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_EQ(run_cli("train --policy.path=lerobot/act-reach --dataset.repo_id=lerobot/reach-test --output_dir=" +
                        (scratch / "run3").string() + " --steps=1 --batch_size=4 --num_workers=0", &log), 0) << log;
  // Offline and not cached: a usage error that names HF_HUB_OFFLINE.
  EXPECT_EQ(run_cli("train --policy.path=lerobot/never-fetched --dataset.repo_id=lerobot/reach-test --output_dir=" +
                        (scratch / "run4").string() + " --steps=1", &log), 2) << log;
  EXPECT_NE(log.find("HF_HUB_OFFLINE"), std::string::npos) << log;
}

}  // namespace
}  // namespace lerobot::hub
