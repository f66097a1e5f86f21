// #15 first-hour friction through the built lerobot-cpp: --version, the log naming the metrics
// files and the config written at the start, eval taking the camera size from the checkpoint,
// "did you mean" in eval and infer, infer on a dataset frame, an honest `dataset stats` and
// "unsupported version" for v2.0, progress with rate and ETA on long work.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

std::string cli_ok(const std::string& args) {
  std::string out;
  EXPECT_EQ(run_cli(args, &out), 0) << args << "\n" << out;
  return out;
}

// A 1-step checkpoint of the 64 px reach2d dataset, made once per test process.
const fs::path& checkpoint(std::string* log = nullptr) {
  static std::string first_log;
  static const fs::path dir = [] {
    const fs::path out = train_scratch() / "first_hour_run";
    first_log = cli_ok("train" + join_args(tiny_act_run(out, 1)));
    return out / "checkpoints/last/pretrained_model";
  }();
  if (log) *log = first_log;
  return dir;
}

TEST(FirstHour, VersionIsPrinted) {
  const std::string out = cli_ok("--version");
  EXPECT_EQ(out.rfind("lerobot-cpp ", 0), 0u) << out;
  EXPECT_NE(out.find("LibTorch"), std::string::npos) << out;
}

TEST(FirstHour, TheLogNamesTheMetricsFilesAndTheConfigIsWrittenAtTheStart) {
  std::string log;
  const fs::path out = checkpoint(&log).parent_path().parent_path().parent_path();
  EXPECT_NE(log.find((out / "train_metrics.jsonl").string()), std::string::npos) << log;
  EXPECT_NE(log.find((out / "tensorboard").string()), std::string::npos) << log;
  EXPECT_NE(log.find("\"batch_size\": 4"), std::string::npos) << log;  // the resolved config
  EXPECT_TRUE(fs::exists(out / "train_config.json"));
  EXPECT_EQ(load_json_or_yaml(out / "train_config.json")["output_dir"], out.string());
}

TEST(FirstHour, EvalTakesTheCameraSizeFromTheCheckpoint) {
  // The env's default image_size is 96; the policy was trained on 64 px images.
  const std::string out = cli_ok("eval --policy.path=" + checkpoint().string() +
                                 " --env.type=reach2d --eval.n_episodes=1 --eval.batch_size=1 --eval.max_videos=0"
                                 " --output_dir=" + (train_scratch() / "eval_out").string());
  EXPECT_NE(out.find("pc_success"), std::string::npos) << out;
}

// --policy.use_amp runs the rollouts under autocast, as lerobot-eval does (bf16 on the CPU): the
// same episodes with the same seeds get other rewards than in full precision.
TEST(FirstHour, EvalWithUseAmpRunsUnderAutocast) {
  double reward[2] = {0, 0};
  for (int amp = 0; amp < 2; ++amp) {
    const fs::path out = train_scratch() / ("eval_amp_" + std::to_string(amp));
    const std::string log = cli_ok("eval --policy.path=" + checkpoint().string() +
                                   " --env.type=reach2d --eval.n_episodes=2 --eval.max_videos=0 --policy.use_amp=" +
                                   (amp ? "true" : "false") + " --output_dir=" + out.string());
    EXPECT_EQ(log.find("under bf16 autocast") != std::string::npos, amp == 1) << log;
    reward[amp] = load_json_or_yaml(out / "eval_info.json")["overall"]["avg_sum_reward"].get<double>();
  }
  EXPECT_NE(reward[0], reward[1]);
}

// The evaluation during training runs under the training's mixed precision, as LeRobot's
// accelerator.autocast() around eval_policy_all: its rewards are those of `eval --policy.use_amp`
// on the checkpoint of that step, not of the fp32 eval. Its record carries LeRobot's eval tracker
// counts (eval/steps, samples, episodes, epochs).
TEST(FirstHour, TrainingEvalRunsUnderTheTrainingsMixedPrecision) {
  const fs::path run = train_scratch() / "train_eval_bf16";
  fs::remove_all(run);
  cli_ok("train" + join_args(tiny_act_run(run, 2, {"--accelerator.mixed_precision=bf16", "--env.type=reach2d",
                                                   "--env.image_size=64", "--env_eval_freq=2", "--eval.n_episodes=2",
                                                   "--eval.batch_size=2", "--save_freq=2"})));
  Json eval_record;
  std::ifstream lines(run / "train_metrics.jsonl");
  for (std::string line; std::getline(lines, line);) {
    const Json r = Json::parse(line);
    if (r["split"] == "eval" && r.contains("pc_success")) eval_record = r;
  }
  ASSERT_TRUE(eval_record.is_object()) << "no evaluation record";
  EXPECT_EQ(eval_record["steps"], 2);
  EXPECT_EQ(eval_record["samples"], 8);  // 2 steps x batch 4
  EXPECT_TRUE(eval_record.contains("episodes") && eval_record.contains("epochs")) << eval_record.dump();
  double reward[2] = {0, 0};
  for (int amp = 0; amp < 2; ++amp) {
    const fs::path out = train_scratch() / ("train_eval_bf16_eval_" + std::to_string(amp));
    cli_ok("eval --policy.path=" + (run / "checkpoints/000002/pretrained_model").string() +
           " --env.type=reach2d --env.image_size=64 --eval.n_episodes=2 --eval.batch_size=2 --eval.max_videos=0 --seed=7"
           " --policy.use_amp=" + (amp ? "true" : "false") + " --output_dir=" + out.string());
    reward[amp] = load_json_or_yaml(out / "eval_info.json")["overall"]["avg_sum_reward"].get<double>();
  }
  ASSERT_NE(reward[0], reward[1]) << "bf16 and fp32 rollouts agree: the comparison below could not fail";
  EXPECT_EQ(eval_record["avg_sum_reward"].get<double>(), reward[1]) << "fp32 gave " << reward[0];
}

TEST(FirstHour, EvalAndInferSuggestTheFlagMeant) {
  std::string out;
  EXPECT_EQ(run_cli("eval --policy.pth=" + checkpoint().string() + " --env.type=reach2d", &out), 2) << out;
  EXPECT_NE(out.find("did you mean --policy.path"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_cli("infer --policy.path=" + checkpoint().string() + " --observaton=x.safetensors", &out), 2) << out;
  EXPECT_NE(out.find("did you mean '--observation'"), std::string::npos) << out;
}

TEST(FirstHour, InferTakesAnObservationFromADatasetAndPrintsTheWholeChunk) {
  const std::string out = cli_ok("infer --policy.path=" + checkpoint().string() + " --dataset.root=" +
                                 reach2d_dataset().string() + " --frame=3");
  EXPECT_NE(out.find("action chunk 5 x 2"), std::string::npos) << out;
  EXPECT_NE(out.find("  [4]"), std::string::npos) << out;  // the chunk's last action
  EXPECT_NE(out.find("recorded action at that frame:"), std::string::npos) << out;
  std::string bad;
  EXPECT_EQ(run_cli("infer --policy.path=" + checkpoint().string() + " --dataset.root=" + reach2d_dataset().string() +
                        " --frame=100000",
                    &bad),
            2)
      << bad;
  EXPECT_NE(bad.find("--frame"), std::string::npos) << bad;
}

TEST(FirstHour, DatasetStatsAgreeOnAFreshlyGeneratedDataset) {
  std::string out;
  EXPECT_EQ(run_cli("dataset stats " + reach2d_dataset().string(), &out), 0) << out;
  EXPECT_NE(out.find("stats match meta/stats.json"), std::string::npos) << out;
  EXPECT_EQ(out.find("feature(s) differ"), std::string::npos) << out;
}

TEST(FirstHour, AV20DatasetIsAnUnsupportedVersion) {
  const fs::path root = copy_dataset("v20");
  edit_json(root / "meta/info.json", [](Json& j) { j["codebase_version"] = "v2.0"; });
  std::string out;
  EXPECT_EQ(run_cli("dataset info " + root.string(), &out), 3) << out;
  EXPECT_NE(out.find("unsupported codebase_version v2.0"), std::string::npos) << out;
  EXPECT_EQ(out.find("tasks.jsonl"), std::string::npos) << out;
}

// Under a pipe (as here) the progress display is a line per tenth of the work: "LABEL: [ i/n ... ETA ]".
size_t count_progress_lines(const std::string& out, const std::string& label, const std::string& unit) {
  size_t n = 0;
  for (size_t at = out.find(label + ": ["); at != std::string::npos; at = out.find(label + ": [", at + 1)) {
    const std::string line = out.substr(at, out.find('\n', at) - at);
    EXPECT_NE(line.find(unit + "/s | ETA "), std::string::npos) << line;
    ++n;
  }
  return n;
}

TEST(FirstHour, EvalValidateAndStatsShowProgressWithRateAndEta) {
  const std::string eval = cli_ok("eval --policy.path=" + checkpoint().string() +
                                  " --env.type=reach2d --eval.n_episodes=4 --eval.batch_size=2 --eval.max_videos=0"
                                  " --output_dir=" + (train_scratch() / "eval_progress").string());
  EXPECT_EQ(count_progress_lines(eval, "eval", "episodes"), 2u) << eval;  // after each batch of 2
  EXPECT_NE(eval.find("eval: [ 4/4 100% |"), std::string::npos) << eval;
  const std::string validate = cli_ok("dataset validate " + reach2d_dataset().string());
  EXPECT_GE(count_progress_lines(validate, "validate", "files"), 2u) << validate;
  EXPECT_NE(validate.find("100% |"), std::string::npos) << validate;
  const std::string stats = cli_ok("dataset stats " + reach2d_dataset().string());
  EXPECT_GE(count_progress_lines(stats, "stats", "episodes"), 2u) << stats;
  ::setenv("LEROBOT_PROGRESS", "off", 1);
  const std::string quiet = cli_ok("dataset stats " + reach2d_dataset().string());
  ::unsetenv("LEROBOT_PROGRESS");
  EXPECT_EQ(count_progress_lines(quiet, "stats", "episodes"), 0u) << quiet;
}

// A policy type LeRobot has and lerobot.cpp lacks is refused by name (what is missing, and why),
// not as an unknown word; a misspelt one still gets the nearest type.
TEST(FirstHour, LeRobotsPolicyTypesWeLackAreRefusedByName) {
  std::string out;
  EXPECT_EQ(run_cli("train --policy.type=pi0_fast --dataset.root=" + reach2d_dataset().string(), &out), 2) << out;
  EXPECT_NE(out.find("'pi0_fast' is LeRobot's, but lerobot.cpp does not have it"), std::string::npos) << out;
  EXPECT_NE(out.find("FAST"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --policy.type=groot --dataset.root=" + reach2d_dataset().string(), &out), 2) << out;
  EXPECT_NE(out.find("'groot' is LeRobot's"), std::string::npos) << out;
  EXPECT_EQ(run_cli("train --policy.type=smolvlaa --dataset.root=" + reach2d_dataset().string(), &out), 2) << out;
  EXPECT_NE(out.find("unknown choice 'smolvlaa'"), std::string::npos) << out;
  EXPECT_NE(out.find("smolvla"), std::string::npos) << out;
}

}  // namespace
}  // namespace lerobot
