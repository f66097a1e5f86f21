// `lerobot-cpp train` (the built executable) with Hub ids against the local Hub server (tests/hub/hub_server.py):
// --dataset.repo_id into $HF_LEROBOT_HOME/hub, --policy.path=org/name into $HF_HUB_CACHE, and
// the same run again offline, served from the cache; --policy.push_to_hub publishing the trained
// policy, and its refusals before the first step.
#include <gtest/gtest.h>

#include <cstdlib>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/hashing.h"
#include "lerobot/hub/http.h"

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

// --policy.pretrained_revision picks the tagged checkpoint (LeRobot's make_policy loads the weights
// at it); without it, main's. A step's tag is how LeRobot names a pushed checkpoint.
TEST(HubTrain, PretrainedRevisionPicksTheTaggedCheckpoint) {
  TempDir tmp;
  const fs::path scratch = tmp.path;
  const fs::path data = scratch / "reach2d", base = scratch / "base";
  std::string log;
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=64 --output_dir=" + data.string(), &log), 0) << log;
  std::string two_steps = kTinyAct;
  two_steps.replace(two_steps.find("--steps=1"), 9, "--steps=2 --save_freq=1");
  ASSERT_EQ(run_cli("train" + two_steps + " --dataset.root=" + data.string() + " --output_dir=" + base.string(), &log), 0) << log;
  const fs::path step1 = base / "checkpoints/000001/pretrained_model", step2 = base / "checkpoints/000002/pretrained_model";
  ASSERT_NE(read_file(step1 / "model.safetensors"), read_file(step2 / "model.safetensors"));
  const std::string kStep1 = std::string(40, '1'), kMain = std::string(40, '2');
  Json config{{"token", "unused"},
              {"faults", Json::object()},
              {"repos", Json::array({Json{{"type", "model"},
                                          {"id", "lerobot/act-reach"},
                                          {"revisions", Json::array({Json{{"commit", kMain}, {"dir", step2.string()}, {"branches", {"main"}}},
                                                                     Json{{"commit", kStep1}, {"dir", step1.string()}, {"tags", {"1"}}}})}}})}};
  const fs::path home = scratch / "hf_home";
  const fs::path snaps = home / "hub/models--lerobot--act-reach/snapshots";
  testing::HubServer server(config, scratch / "server");
  HubEnvironment env(server.endpoint(), home);
  const std::string finetune = " --dataset.root=" + data.string() + " --steps=1 --batch_size=4 --num_workers=0 --output_dir=";
  ASSERT_EQ(run_cli("train --policy.path lerobot/act-reach --policy.pretrained_revision=1" + finetune + (scratch / "at1").string(), &log), 0) << log;
  EXPECT_NE(log.find("Fine-tuning from " + (snaps / kStep1).string() + " (Hub revision 1)"), std::string::npos) << log;
  EXPECT_EQ(read_file(snaps / kStep1 / "model.safetensors"), read_file(step1 / "model.safetensors"));
  EXPECT_FALSE(fs::exists(snaps / kMain)) << "main was fetched too";
  EXPECT_EQ(read_file(home / "hub/models--lerobot--act-reach/refs/1"), kStep1);
  const Json saved = Json::parse(read_file(scratch / "at1/checkpoints/last/pretrained_model/train_config.json"));
  EXPECT_EQ(saved["policy"]["pretrained_revision"], "1");

  ASSERT_EQ(run_cli("train --policy.path=lerobot/act-reach" + finetune + (scratch / "atmain").string(), &log), 0) << log;
  EXPECT_NE(log.find("Fine-tuning from " + (snaps / kMain).string()), std::string::npos) << log;
  EXPECT_EQ(read_file(snaps / kMain / "model.safetensors"), read_file(step2 / "model.safetensors"));
  // A revision the repo does not have: a usage error naming it, nothing trained.
  EXPECT_EQ(run_cli("train --policy.path=lerobot/act-reach --policy.pretrained_revision=v9" + finetune + (scratch / "at9").string(), &log), 2) << log;
  EXPECT_NE(log.find("v9"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(scratch / "at9/checkpoints")) << log;
}

TEST(HubTrain, PushToHubPublishesTheTrainedPolicyAndFailsEarlyWithoutAToken) {
  TempDir tmp;
  const fs::path scratch = tmp.path;
  const fs::path data = scratch / "reach2d";
  std::string log;
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=64 --output_dir=" + data.string(), &log), 0) << log;
  const std::string token = "hf_pushTESTtoken_789";
  Json config{{"token", "unused"},
              {"repos", Json::array()},
              {"users", Json::array({Json{{"token", token}, {"name", "alice"}, {"orgs", Json::array({Json{{"name", "acme"}}})}}})}};
  testing::HubServer server(config, scratch / "server");
  const fs::path home = scratch / "hf_home";
  HubEnvironment env(server.endpoint(), home);
  const std::string run = "train" + std::string(kTinyAct) + " --dataset.root=" + data.string() +
                          " --dataset.repo_id=lerobot/reach-test --policy.push_to_hub=true";

  // Refused before any work: no repo id, no token, a token the Hub refuses, a namespace the user
  // is not in. No output folder is made and no step runs; the token is never printed.
  struct Refusal {
    std::string flags, token;
    std::vector<std::string> words;
  };
  const std::vector<Refusal> refusals = {
      {"", token, {"--policy.repo_id"}},
      {" --policy.repo_id=acme/bad..name", token, {"--policy.repo_id", "not a Hub repo id"}},
      {" --policy.repo_id=acme/act", "", {"HF_TOKEN", "hf auth login"}},
      {" --policy.repo_id=acme/act", "hf_revokedTOKEN_000", {"refused the token", "HF_TOKEN"}},
      {" --policy.repo_id=bob/act", token, {"not a member of 'bob'", "--policy.repo_id=alice/act"}},
  };
  for (size_t i = 0; i < refusals.size(); ++i) {
    const Refusal& r = refusals[i];
    if (r.token.empty()) ::unsetenv("HF_TOKEN");
    else ::setenv("HF_TOKEN", r.token.c_str(), 1);
    const fs::path out = scratch / ("refused" + std::to_string(i));
    EXPECT_EQ(run_cli(run + r.flags + " --output_dir=" + out.string(), &log), 2) << r.flags << "\n" << log;
    for (const auto& w : r.words) EXPECT_NE(log.find(w), std::string::npos) << w << " not in\n" << log;
    EXPECT_FALSE(fs::exists(out)) << log;
    EXPECT_EQ(log.find("step:"), std::string::npos) << log;
    if (!r.token.empty()) {
      EXPECT_EQ(log.find(r.token), std::string::npos) << log;
    }
  }

  // Published: the pretrained_model files and a model card, in one commit of a private repo.
  ::setenv("HF_TOKEN", token.c_str(), 1);
  const fs::path out = scratch / "run";
  ASSERT_EQ(run_cli(run + " --policy.repo_id=acme/act-reach --policy.private=true --policy.license=mit"
                          " --policy.tags=[sim,reach2d] --output_dir=" + out.string(), &log), 0) << log;
  EXPECT_NE(log.find("Model pushed to " + server.endpoint() + "/acme/act-reach"), std::string::npos) << log;
  EXPECT_EQ(log.find(token), std::string::npos) << log;
  const fs::path pretrained = out / "checkpoints/last/pretrained_model";
  HubClient reader = testing::make_client(server.endpoint(), scratch / "reader", token);
  const Snapshot snap = reader.snapshot(scratch / "reader/hub", RepoType::kModel, "acme/act-reach", "main", nullptr);
  int compared = 0;
  for (const auto& e : fs::directory_iterator(pretrained)) {
    const std::string name = e.path().filename().string();
    ASSERT_TRUE(fs::exists(snap.dir / name)) << name;
    EXPECT_EQ(sha256_file(snap.dir / name), sha256_file(e.path())) << name;
    ++compared;
  }
  EXPECT_GE(compared, 4);  // config.json, model.safetensors, train_config.json, processor files
  const std::string card = read_file(snap.dir / "README.md");
  for (const std::string w : {"---\ndatasets: lerobot/reach-test\nlibrary_name: lerobot\nlicense: mit\nmodel_name: act\n"
                              "pipeline_tag: robotics\ntags:\n- act\n- lerobot\n- reach2d\n- robotics\n- sim\n---\n"})
    EXPECT_NE(card.find(w), std::string::npos) << card;
  const Json train_config = Json::parse(read_file(snap.dir / "train_config.json"));
  EXPECT_EQ(train_config["policy"]["repo_id"], "acme/act-reach");
  EXPECT_EQ(train_config["policy"]["push_to_hub"], true);
  bool lfs_weights = false;
  for (const auto& q : server.requests())
    if (q["method"] == "PUT") {
      EXPECT_EQ(q["auth"], "none");
      lfs_weights = true;
    }
  EXPECT_TRUE(lfs_weights) << "model.safetensors did not go through LFS";
  HttpRequest commits_req;
  commits_req.url = server.endpoint() + "/api/models/acme/act-reach/commits/main";
  commits_req.headers = {"Authorization: Bearer " + token};
  const Json commits = Json::parse(http_perform(commits_req).body);
  ASSERT_EQ(commits.size(), 2u) << commits.dump();
  EXPECT_EQ(commits[0]["id"], snap.commit);
  EXPECT_EQ(commits[0]["title"], "Upload policy, processors, model card and train config");
  EXPECT_EQ(commits[1]["title"], "initial commit");
  HubClient anonymous = testing::make_client(server.endpoint(), scratch / "anon");
  EXPECT_THROW(anonymous.repo_info(RepoType::kModel, "acme/act-reach", "main"), Error);  // --policy.private=true

  // The published policy fine-tunes by its Hub id, and the config.json's push_to_hub is not
  // applied to the new run (it names where that policy was published).
  ASSERT_EQ(run_cli("train --policy.path=acme/act-reach --dataset.root=" + data.string() + " --output_dir=" +
                        (scratch / "finetune").string() + " --steps=1 --batch_size=4 --num_workers=0", &log), 0) << log;
  EXPECT_NE(log.find("Fine-tuning from"), std::string::npos) << log;
  EXPECT_EQ(log.find("Model pushed"), std::string::npos) << log;
}

}  // namespace
}  // namespace lerobot::hub
