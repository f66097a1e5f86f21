// `lerobot-cpp train` (the built executable) with Hub ids against the local Hub server (tests/hub/hub_server.py):
// --dataset.repo_id into $HF_LEROBOT_HOME/hub, --policy.path=org/name into $HF_HUB_CACHE, and
// the same run again offline, served from the cache; --policy.push_to_hub publishing the trained
// policy, and its refusals before the first step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

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

// --save_checkpoint_to_hub (LeRobot's push_checkpoint_to_hub): every checkpoint goes to
// --policy.repo_id as checkpoints/<step>/ in a commit "checkpoint <step>" tagged <step>, while the
// run goes on; the run then resumes from that repo on a machine without its output folder (and
// --policy.path of it says that is how to use it). A refused upload is an error naming the step,
// the run still trains to its end and saves locally, and then exits with an error.
TEST(HubTrain, SaveCheckpointToHubPushesEveryCheckpointAndTheRunResumesFromIt) {
  TempDir tmp;
  const fs::path scratch = tmp.path;
  const fs::path data = scratch / "reach2d";
  std::string log;
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=64 --output_dir=" + data.string(), &log), 0) << log;
  const std::string token = "hf_ckptPUSHtoken_4242";
  Json config{{"token", "unused"},
              {"repos", Json::array()},
              {"users", Json::array({Json{{"token", token}, {"name", "alice"}}})},
              {"refused_commits", Json{{"alice/act-run2:checkpoint 000004", "storage quota exceeded"}}}};
  testing::HubServer server(config, scratch / "server");
  HubEnvironment env(server.endpoint(), scratch / "hf_home");
  const std::string run = "train" + std::string(kTinyAct) + " --dataset.root=" + data.string() + " --save_checkpoint_to_hub=true";

  // Refused before any work: no repo id; no token.
  ::setenv("HF_TOKEN", token.c_str(), 1);
  EXPECT_EQ(run_cli(run + " --output_dir=" + (scratch / "r0").string(), &log), 2) << log;
  EXPECT_NE(log.find("--policy.repo_id"), std::string::npos) << log;
  EXPECT_NE(log.find("--save_checkpoint_to_hub=true"), std::string::npos) << log;
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(run_cli(run + " --policy.repo_id=alice/act-run --output_dir=" + (scratch / "r1").string(), &log), 2) << log;
  EXPECT_NE(log.find("HF_TOKEN"), std::string::npos) << log;
  EXPECT_EQ(log.find("step:"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(scratch / "r1"));

  // Steps 2 and 4, pushed as they are saved; nothing published at the end (push_to_hub is false).
  ::setenv("HF_TOKEN", token.c_str(), 1);
  const fs::path out = scratch / "run";
  ASSERT_EQ(run_cli(run + " --steps=4 --save_freq=2 --policy.repo_id=alice/act-run --output_dir=" + out.string(), &log), 0)
      << log;
  EXPECT_EQ(log.find(token), std::string::npos) << log;
  EXPECT_NE(log.find("Checkpoint 000002 pushed to " + server.endpoint() + "/alice/act-run"), std::string::npos) << log;
  EXPECT_NE(log.find("Checkpoint 000004 pushed"), std::string::npos) << log;
  EXPECT_EQ(log.find("Model pushed"), std::string::npos) << log;
  HubClient reader = testing::make_client(server.endpoint(), scratch / "reader", token);
  const RepoInfo info = reader.repo_info(RepoType::kModel, "alice/act-run", "main");
  int pushed = 0;
  for (const char* step : {"000002", "000004"}) {
    const fs::path local = out / "checkpoints" / step;
    for (const auto& e : fs::recursive_directory_iterator(local)) {
      if (!e.is_regular_file()) continue;
      const std::string in_repo = "checkpoints/" + std::string(step) + "/" + fs::relative(e.path(), local).generic_string();
      ASSERT_NE(std::find(info.files.begin(), info.files.end(), in_repo), info.files.end()) << in_repo;
      EXPECT_EQ(sha256_file(reader.download_file(scratch / "reader/hub", RepoType::kModel, "alice/act-run", "main", in_repo)),
                sha256_file(e.path())) << in_repo;
      ++pushed;
    }
  }
  EXPECT_GE(pushed, 2 * 8);  // pretrained_model/ and training_state/ of both steps
  const RepoRefs refs = reader.list_refs(RepoType::kModel, "alice/act-run");
  HttpRequest commits_req;
  commits_req.url = server.endpoint() + "/api/models/alice/act-run/commits/main";
  commits_req.headers = {"Authorization: Bearer " + token};
  const Json commits = Json::parse(http_perform(commits_req).body);
  ASSERT_EQ(commits.size(), 3u) << commits.dump();  // checkpoint 000004, checkpoint 000002, initial commit
  EXPECT_EQ(commits[0]["title"], "checkpoint 000004");
  EXPECT_EQ(commits[1]["title"], "checkpoint 000002");
  for (const auto& [tag, commit] : {std::pair<std::string, Json>{"000002", commits[1]["id"]}, {"000004", commits[0]["id"]}}) {
    auto it = std::find_if(refs.tags.begin(), refs.tags.end(), [&](const RepoRefs::Ref& r) { return r.name == tag; });
    ASSERT_NE(it, refs.tags.end()) << "no tag " << tag;
    EXPECT_EQ(it->commit, commit.get<std::string>()) << tag;
  }

  // On a machine without the run's folder: resumed from the repo's latest checkpoint, step 4.
  const fs::path resumed = scratch / "elsewhere";
  ASSERT_EQ(run_cli("train --resume=true --config_path=alice/act-run --steps=6 --save_checkpoint_to_hub=false --output_dir=" +
                        resumed.string(), &log), 0) << log;
  EXPECT_NE(log.find("at step 4"), std::string::npos) << log;
  EXPECT_EQ(read_file(resumed / "checkpoints/000004/pretrained_model/model.safetensors"),
            read_file(out / "checkpoints/000004/pretrained_model/model.safetensors"));
  // The repo is a run's checkpoints, not a published policy: --policy.path says so and how to use it.
  EXPECT_EQ(run_cli("train --policy.path=alice/act-run --dataset.root=" + data.string() +
                        " --steps=1 --batch_size=4 --num_workers=0 --output_dir=" + (scratch / "ft").string(), &log), 2)
      << log;
  EXPECT_NE(log.find("--resume=true --config_path=alice/act-run"), std::string::npos) << log;

  // A refused upload: an error naming the step while the run goes on; the later checkpoint is
  // pushed, everything is saved locally, and the run then fails naming what is missing.
  const fs::path out2 = scratch / "run2";
  EXPECT_NE(run_cli(run + " --steps=6 --save_freq=2 --policy.repo_id=alice/act-run2 --output_dir=" + out2.string(), &log), 0)
      << log;
  EXPECT_NE(log.find("Checkpoint 000004 was not pushed to alice/act-run2: "), std::string::npos) << log;
  EXPECT_NE(log.find("storage quota exceeded"), std::string::npos) << log;
  EXPECT_NE(log.find("Checkpoint 000006 pushed"), std::string::npos) << log;
  EXPECT_NE(log.find("1 of 3 checkpoint(s) were not pushed to alice/act-run2 (000004)"), std::string::npos) << log;
  EXPECT_NE(log.find("--save_checkpoint_to_hub"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(out2 / "checkpoints/000006/pretrained_model/model.safetensors"));
  EXPECT_EQ(log.find(token), std::string::npos) << log;
}

}  // namespace
}  // namespace lerobot::hub
