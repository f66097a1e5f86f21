// W&B logging (#19): `lerobot-cpp train --wandb.enable=true` against a stand-in `wandb` module
// (tests/train/wandb_standin, put on PYTHONPATH; the W&B service is not reachable here) that records
// what the real client would receive: wandb.init's arguments, every logged key and step, the model
// artifacts with their files, finish. The runs are the tiny ACT runs of the other train tests.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>

#include "lerobot/train/metrics/wandb_run.h"
#include "lerobot/train/train_config.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

const char* kSecret = "secret-value";

struct WandBRun {
  int code = -1;
  std::string log;
  fs::path out;
  std::vector<Json> records;  // one per wandb.init the stand-in saw
};

std::vector<Json> read_jsonl(const fs::path& p) {
  std::vector<Json> lines;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(Json::parse(line));
  return lines;
}

// Runs `lerobot-cpp train ARGS` with the stand-in on PYTHONPATH; `env` is prepended to the command
// (VAR=value ... or `env -u VAR`); the records land in a fresh dir.
WandBRun run_with_standin(const std::string& name, const std::vector<std::string>& args, const std::string& env = "") {
  WandBRun r;
  const fs::path dir = train_scratch() / ("wandb_" + name);
  const fs::path records = dir / "records";
  fs::remove_all(dir);
  fs::create_directories(records);
  r.code = run_shell("env " + env + " PYTHONPATH=" + std::string(WANDB_STANDIN_DIR) + " STANDIN_WANDB_DIR=" +
                         records.string() + " " + LEROBOT_CLI + " train" + join_args(args),
                     &r.log);
  for (const auto& e : fs::directory_iterator(records))
    if (e.path().extension() == ".json") r.records.push_back(Json::parse(read_file(e.path())));
  return r;
}

std::vector<std::string> wandb_flags(const fs::path& out, int64_t steps, std::vector<std::string> extra) {
  std::vector<std::string> flags = {"--wandb.enable=true", "--save_freq=2"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  return tiny_act_run(out, steps, flags);
}

// The logs at `step` merged (a step may have a train and an eval call).
Json logged_at(const Json& record, int64_t step) {
  Json merged = Json::object();
  for (const auto& l : record["logs"])
    if (l["step"].is_number() && l["step"].get<int64_t>() == step) merged.update(l["data"]);
  return merged;
}

bool tree_contains(const fs::path& dir, const std::string& needle) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && read_file(e.path(), 1ull << 30).find(needle) != std::string::npos) {
      ADD_FAILURE() << e.path() << " contains the secret";
      return true;
    }
  return false;
}

TEST(WandB, LogsLeRobotsInitArgumentsMetricsEvalAndCheckpointArtifacts) {
  const fs::path out = train_scratch() / "wandb_main_out";
  fs::remove_all(out);
  const WandBRun r = run_with_standin(
      "main",
      wandb_flags(out, 4,
                  {"--job_name=wandb_job", "--wandb.project=lerobot-cpp-test", "--wandb.entity=team-x",
                   "--wandb.notes=tiny-run", "--dataset.eval_split=0.2", "--eval_steps=2", "--env.type=reach2d",
                   "--env.image_size=64", "--env_eval_freq=4", "--eval.n_episodes=1", "--eval.batch_size=1"}),
      std::string("WANDB_API_KEY=") + kSecret);
  ASSERT_EQ(r.code, 0) << r.log;
  ASSERT_EQ(r.records.size(), 1u) << r.log;
  const Json& rec = r.records[0];

  // wandb.init as LeRobot's WandBLogger calls it.
  const Json& init = rec["init"];
  const Json saved = load_json_or_yaml(out / "checkpoints/last/pretrained_model/train_config.json");
  const std::string id = init["id"].get<std::string>();
  EXPECT_TRUE(std::regex_match(id, std::regex("[a-z0-9]{8}"))) << id;
  EXPECT_EQ(saved["wandb"]["run_id"], id);  // so that --resume=true continues this run
  EXPECT_EQ(load_json_or_yaml(out / "train_config.json")["wandb"]["run_id"], id);
  EXPECT_EQ(init["project"], "lerobot-cpp-test");
  EXPECT_EQ(init["entity"], "team-x");
  EXPECT_EQ(init["name"], "wandb_job");
  EXPECT_EQ(init["notes"], "tiny-run");
  EXPECT_EQ(init["mode"], "online");
  EXPECT_EQ(init["job_type"], "train_eval");
  EXPECT_EQ(init["save_code"], false);
  EXPECT_TRUE(init["resume"].is_null());
  EXPECT_EQ(init["dir"], fs::absolute(out).string());
  EXPECT_EQ(init["tags"], Json::array({"policy:act", "seed:7", "dataset:None", "env:reach2d"}));
  EXPECT_EQ(rec["env_silent"], "True");
  const Json& config = init["config"];
  for (auto it = saved.begin(); it != saved.end(); ++it)
    EXPECT_TRUE(config.contains(it.key())) << "the run's config lacks " << it.key();
  EXPECT_EQ(config["policy"]["type"], "act");
  EXPECT_EQ(config["steps"], 4);
  EXPECT_EQ(config["job_name"], "wandb_job");
  EXPECT_EQ(config["wandb"]["run_id"], id);

  // Every JSONL record was logged at its step under LeRobot's names, with the same values.
  const auto lines = read_jsonl(out / "train_metrics.jsonl");
  int train_lines = 0, eval_lines = 0;
  for (const auto& line : lines) {
    const std::string split = line["split"];
    const Json logged = logged_at(rec, line["step"].get<int64_t>());
    (split == "train" ? train_lines : eval_lines)++;
    for (auto it = line.begin(); it != line.end(); ++it) {
      if (it.key() == "split" || it.key() == "step" || it.key() == "wall_time" || !it.value().is_number()) continue;
      const std::string key = split + "/" + it.key();
      ASSERT_TRUE(logged.contains(key)) << key << " at step " << line["step"] << ": " << logged.dump();
      EXPECT_NEAR(logged[key].get<double>(), it.value().get<double>(), 1e-9 * (1 + std::abs(it.value().get<double>())))
          << key;
    }
  }
  EXPECT_EQ(train_lines, 4);
  EXPECT_GE(eval_lines, 3);  // held-out loss at 2 and 4, the env evaluation at 4
  for (int64_t step = 1; step <= 4; ++step) {
    const Json logged = logged_at(rec, step);
    for (const char* key : {"train/loss", "train/grad_norm", "train/lr", "train/update_s", "train/dataloading_s",
                            "train/samples", "train/episodes", "train/epochs", "train/steps"})
      EXPECT_TRUE(logged.contains(key)) << key << " at step " << step;
    EXPECT_EQ(logged["train/steps"], step);
  }
  const Json at4 = logged_at(rec, 4);
  EXPECT_TRUE(at4.contains("eval/eval_loss")) << at4.dump();
  EXPECT_TRUE(at4.contains("eval/pc_success")) << at4.dump();
  ASSERT_TRUE(at4.contains("eval/video")) << at4.dump();
  EXPECT_EQ(at4["eval/video"]["format"], "mp4");
  EXPECT_EQ(at4["eval/video"]["fps"], 10);  // reach2d's env fps
  EXPECT_TRUE(at4["eval/video"]["exists"].get<bool>()) << at4["eval/video"].dump();
  for (const auto& l : rec["logs"]) EXPECT_LE(l["step"].get<int64_t>(), 4);

  // One model artifact per checkpoint, named <group>-<step> without ':' or '/'.
  ASSERT_EQ(rec["artifacts"].size(), 2u) << rec["artifacts"].dump();
  const std::vector<std::string> steps = {"000002", "000004"};
  for (size_t i = 0; i < 2; ++i) {
    const Json& a = rec["artifacts"][i];
    EXPECT_EQ(a["type"], "model");
    EXPECT_EQ(a["name"], "policy_act-seed_7-dataset_None-env_reach2d-" + steps[i]);
    ASSERT_EQ(a["files"].size(), 1u);
    const fs::path model = out / "checkpoints" / steps[i] / "pretrained_model" / "model.safetensors";
    EXPECT_EQ(fs::path(a["files"][0]["path"].get<std::string>()), fs::absolute(model));
    EXPECT_EQ(a["files"][0]["size"].get<uintmax_t>(), fs::file_size(model));
  }
  EXPECT_TRUE(rec["finished"].get<bool>());

  // The API key reaches wandb through the environment only: in no file we wrote, not in our output.
  EXPECT_FALSE(tree_contains(out, kSecret));
  EXPECT_EQ(r.log.find(kSecret), std::string::npos);
  EXPECT_NE(r.log.find("W&B: run " + id), std::string::npos) << r.log;
}

TEST(WandB, OfflineRunResumesTheSameRunAndDisableArtifactLogsNoModel) {
  const fs::path out = train_scratch() / "wandb_resume_out";
  fs::remove_all(out);
  const fs::path home = train_scratch() / "wandb_empty_home";
  fs::create_directories(home);
  // Offline needs no login: no key, no ~/.netrc.
  const std::string no_login = "-u WANDB_API_KEY -u NETRC HOME=" + home.string();
  const WandBRun first = run_with_standin(
      "resume1", wandb_flags(out, 2, {"--wandb.mode=offline", "--wandb.disable_artifact=true"}), no_login);
  ASSERT_EQ(first.code, 0) << first.log;
  ASSERT_EQ(first.records.size(), 1u);
  const std::string id = first.records[0]["init"]["id"];
  EXPECT_EQ(first.records[0]["init"]["mode"], "offline");
  EXPECT_EQ(first.records[0]["artifacts"].size(), 0u);  // --wandb.disable_artifact=true
  EXPECT_FALSE(logged_at(first.records[0], 2).empty());

  const WandBRun second = run_with_standin(
      "resume2",
      {"--resume=true", "--config_path=" + (out / "checkpoints/last/pretrained_model").string(), "--steps=4"},
      no_login);
  ASSERT_EQ(second.code, 0) << second.log;
  ASSERT_EQ(second.records.size(), 1u);
  const Json& rec = second.records[0];
  EXPECT_EQ(rec["init"]["id"], id);
  EXPECT_EQ(rec["init"]["resume"], "must");
  EXPECT_EQ(rec["init"]["mode"], "offline");
  EXPECT_EQ(rec["artifacts"].size(), 0u);
  // The resumed run logs its own steps only (the first run's lines stay in the appended JSONL).
  std::set<int64_t> steps;
  for (const auto& l : rec["logs"]) steps.insert(l["step"].get<int64_t>());
  EXPECT_EQ(steps, (std::set<int64_t>{3, 4}));
  EXPECT_EQ(load_json_or_yaml(out / "checkpoints/000004/pretrained_model/train_config.json")["wandb"]["run_id"], id);
}

TEST(WandB, AKilledSidecarDoesNotStopTrainingAndTheJsonlStaysComplete) {
  const fs::path out = train_scratch() / "wandb_killed_out";
  fs::remove_all(out);
  const int64_t steps = 12;
  const WandBRun r = run_with_standin("killed", wandb_flags(out, steps, {"--wandb.mode=offline"}),
                                      "STANDIN_WANDB_KILL_AT_LOG=1");
  ASSERT_EQ(r.code, 0) << r.log;
  EXPECT_NE(r.log.find("Training finished at step " + std::to_string(steps)), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("killed by signal 9"), std::string::npos) << r.log;
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0]["logs"].size(), 1u);  // it died at its first log call
  EXPECT_FALSE(r.records[0]["finished"].get<bool>());
  const auto lines = read_jsonl(out / "train_metrics.jsonl");
  ASSERT_EQ(lines.size(), static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i) EXPECT_EQ(lines[i]["step"], i + 1);
  EXPECT_TRUE(fs::exists(out / "checkpoints" / "last" / "pretrained_model" / "model.safetensors"));
}

TEST(WandB, WithoutTheWandbPackageTheRunStopsBeforeStepOneSayingWhatToInstall) {
  const fs::path out = train_scratch() / "wandb_missing_out";
  fs::remove_all(out);
  const fs::path empty = train_scratch() / "wandb_no_module";
  fs::create_directories(empty);
  std::string probe;
  // Where a real wandb is installed, shadow it with a package whose import fails as a missing one does.
  if (run_shell("python3 -c 'import wandb'", &probe) == 0) {
    fs::create_directories(empty / "wandb");
    std::ofstream(empty / "wandb" / "__init__.py") << "raise ModuleNotFoundError(\"No module named 'wandb'\")\n";
  }
  std::string log;
  const int code = run_shell("env PYTHONPATH=" + empty.string() + " WANDB_API_KEY=" + kSecret + " " + LEROBOT_CLI +
                                 " train" + join_args(wandb_flags(out, 2, {})),
                             &log);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("--wandb.enable"), std::string::npos) << log;
  EXPECT_NE(log.find("'wandb' is not importable"), std::string::npos) << log;
  EXPECT_NE(log.find("pip install wandb"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "train_metrics.jsonl"));  // nothing ran: the check comes first
  EXPECT_EQ(log.find(kSecret), std::string::npos) << log;
}

TEST(WandB, OnlineWithoutALoginStopsBeforeStepOneNamingWandbLoginAndOfflineMode) {
  const fs::path out = train_scratch() / "wandb_nologin_out";
  fs::remove_all(out);
  const fs::path home = train_scratch() / "wandb_nologin_home";
  fs::create_directories(home);
  const WandBRun r =
      run_with_standin("nologin", wandb_flags(out, 2, {}), "-u WANDB_API_KEY -u NETRC HOME=" + home.string());
  EXPECT_EQ(r.code, 2) << r.log;
  EXPECT_NE(r.log.find("no W&B login"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("wandb login"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("--wandb.mode=offline"), std::string::npos) << r.log;
  EXPECT_TRUE(r.records.empty());
  EXPECT_FALSE(fs::exists(out / "train_metrics.jsonl"));
  // A ~/.netrc entry for api.wandb.ai (what `wandb login` writes) is a login.
  std::ofstream(home / ".netrc") << "machine api.wandb.ai\n  login user\n  password " << kSecret << "\n";
  fs::permissions(home / ".netrc", fs::perms::owner_read | fs::perms::owner_write);
  const WandBRun ok = run_with_standin("netrc", wandb_flags(out, 1, {}), "-u WANDB_API_KEY -u NETRC HOME=" + home.string());
  EXPECT_EQ(ok.code, 0) << ok.log;
  EXPECT_EQ(ok.records.size(), 1u);
  EXPECT_EQ(ok.log.find(kSecret), std::string::npos);
}

TEST(WandB, TwoProcessesMakeOneRun) {
  const fs::path out = train_scratch() / "wandb_two_out";
  fs::remove_all(out);
  const WandBRun r = run_with_standin("two", wandb_flags(out, 2, {"--num_processes=2", "--wandb.mode=offline"}));
  ASSERT_EQ(r.code, 0) << r.log;
  ASSERT_EQ(r.records.size(), 1u) << r.log;
  EXPECT_EQ(r.records[0]["logs"].size(), 2u);
  EXPECT_EQ(r.records[0]["artifacts"].size(), 1u);
  EXPECT_EQ(load_json_or_yaml(out / "train_config.json")["wandb"]["run_id"], r.records[0]["init"]["id"]);
}

TEST(WandB, TagsAndRunIdsFollowLeRobotAndWandb) {
  register_all_configs();
  TrainPipelineConfig cfg = parse_train_config({"--policy.type=diffusion", "--seed=3",
                                                "--dataset.repo_id=org/" + std::string(80, 'd')});
  const auto tags = wandb_tags(cfg);
  ASSERT_EQ(tags.size(), 3u);
  EXPECT_EQ(tags[0], "policy:diffusion");
  EXPECT_EQ(tags[1], "seed:3");
  EXPECT_EQ(tags[2].size(), 64u);  // W&B refuses longer tags
  EXPECT_EQ(tags[2].rfind("dataset:org/ddd", 0), 0u) << tags[2];
  EXPECT_EQ(wandb_group(cfg), "policy:diffusion-seed:3-dataset:org/" + std::string(80, 'd'));
  cfg.wandb.mode = "dryrun";
  EXPECT_EQ(wandb_mode(cfg.wandb), "online");  // LeRobot: anything else is online
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    const std::string id = new_wandb_run_id();
    EXPECT_TRUE(std::regex_match(id, std::regex("[a-z0-9]{8}"))) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 20u);
}

}  // namespace
}  // namespace lerobot
