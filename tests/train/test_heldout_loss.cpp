// #18 point 4, the held-out eval loss (--dataset.eval_split, --eval_steps, --max_eval_samples):
// LeRobot 0.6's episode split and sample cap against the rule written out here, the JSONL records
// at the right steps with the right sample counts, the value against a computation from the saved
// checkpoint, 1 and 2 processes giving the same value, and the bad inputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <map>

#include "lerobot/datasets/data_loader.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/train/batch_prep.h"
#include "lerobot/train/eval_split.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;

namespace {

// Episode e has task kTasks[e]; 12 frames each; state (2), environment state (3), action (2).
const std::vector<std::string> kTasks = {"A", "B", "A", "A", "B", "C", "A"};
constexpr int64_t kFrames = 12;

const fs::path& tasks_dataset() {
  static const fs::path root = [] {
    const fs::path r = train_scratch() / "tasks_ds";
    std::vector<FeatureSpec> feats = {{"observation.state", "float32", {2}, Json::array({"a", "b"}), Json()},
                                      {"observation.environment_state", "float32", {3}, Json::array({"x", "y", "z"}), Json()},
                                      {"action", "float32", {2}, Json::array({"a", "b"}), Json()}};
    DatasetWriter w(r, 10, feats);
    for (size_t e = 0; e < kTasks.size(); ++e) {
      for (int64_t i = 0; i < kFrames; ++i) {
        const float t = float(i) / kFrames, k = float(e);
        w.add_frame({{"observation.state", torch::tensor({std::sin(t + k), std::cos(t - k)})},
                     {"observation.environment_state", torch::tensor({t, k * 0.1f, t * t})},
                     {"action", torch::tensor({std::sin(t + k + 0.1f), std::cos(t - k + 0.1f)})}});
      }
      w.save_episode(kTasks[e]);
    }
    w.finalize();
    return r;
  }();
  return root;
}

std::vector<std::string> act_args(const fs::path& out, int64_t steps, std::vector<std::string> extra) {
  extra.insert(extra.begin(), "--dataset.root=" + tasks_dataset().string());
  return tiny_act_run(out, steps, extra);
}

std::vector<Json> jsonl(const fs::path& file) {
  std::vector<Json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

std::map<int64_t, Json> eval_records(const fs::path& out) {
  std::map<int64_t, Json> r;
  for (const auto& j : jsonl(out / "train_metrics.jsonl"))
    if (j.contains("eval_loss")) r[j["step"].get<int64_t>()] = j;
  return r;
}

// The rule of LeRobot's make_train_eval_datasets, written out again: per first task, in selection
// order, the last ceil(n × split) episodes.
std::pair<std::vector<int64_t>, std::vector<int64_t>> expected_split(const std::vector<int64_t>& base, double split) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<int64_t>> by;
  for (int64_t e : base) {
    if (!by.count(kTasks[e])) order.push_back(kTasks[e]);
    by[kTasks[e]].push_back(e);
  }
  std::vector<int64_t> train, eval;
  for (const auto& t : order) {
    const auto& v = by[t];
    const size_t n_eval = static_cast<size_t>(std::ceil(v.size() * split));
    for (size_t i = 0; i < v.size(); ++i) (i < v.size() - n_eval ? train : eval).push_back(v[i]);
  }
  return {train, eval};
}

}  // namespace

TEST(HeldOutSplit, EpisodesPerTaskAsLeRobot) {
  const DatasetMetadata meta = load_dataset_metadata(tasks_dataset());
  const auto all = selected_episodes(meta, std::nullopt, std::nullopt);
  EXPECT_EQ(all, std::vector<int64_t>({0, 1, 2, 3, 4, 5, 6}));
  const EpisodeSplit s = split_episodes(meta, all, 0.3);
  // A: 0 2 3 6 -> ceil(1.2) = 2 held out; B: 1 4 -> 1; C: 5 -> 1.
  EXPECT_EQ(s.train, std::vector<int64_t>({0, 2, 1}));
  EXPECT_EQ(s.eval, std::vector<int64_t>({3, 6, 4, 5}));
  EXPECT_EQ(s.num_tasks, 3);
  EXPECT_EQ(s.train, expected_split(all, 0.3).first);
  EXPECT_EQ(s.eval, expected_split(all, 0.3).second);
  // Selection order counts ("the last" of each task in the order given), and exclusions apply.
  const auto reversed = selected_episodes(meta, std::vector<int64_t>{6, 5, 4, 3, 2, 1, 0}, std::vector<int64_t>{3});
  EXPECT_EQ(reversed, std::vector<int64_t>({6, 5, 4, 2, 1, 0}));
  for (double split : {0.1, 0.25, 0.5, 0.6}) {
    const EpisodeSplit r = split_episodes(meta, reversed, split);
    EXPECT_EQ(r.train, expected_split(reversed, split).first) << split;
    EXPECT_EQ(r.eval, expected_split(reversed, split).second) << split;
  }
  // Every task's episodes all held out: no training episode left.
  try {
    split_episodes(meta, all, 0.8);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--dataset.eval_split"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0 training episodes"), std::string::npos) << e.what();
  }
}

TEST(HeldOutSplit, MaxEvalSamplesPerTask) {
  const std::vector<int64_t> frames = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const std::vector<int64_t> tasks = {2, 2, 0, 0, 0, 2, 1, 1, 1, 1};
  EXPECT_EQ(cap_eval_frames(frames, tasks, 0), frames);
  EXPECT_EQ(cap_eval_frames(frames, tasks, 5), std::vector<int64_t>({12, 16, 10}));          // 5 // 3 = 1 per task
  EXPECT_EQ(cap_eval_frames(frames, tasks, 7), std::vector<int64_t>({12, 13, 16, 17, 10, 11}));  // 2 per task
  EXPECT_EQ(cap_eval_frames(frames, tasks, 1), std::vector<int64_t>({12, 16, 10}));          // at least 1
}

TEST(HeldOutLoss, LoggedAtEvalStepsAndEqualToTheCheckpointsLoss) {
  const fs::path out = train_scratch() / "heldout_run";
  run_train(act_args(out, 4, {"--dataset.eval_split=0.3", "--eval_steps=2", "--save_freq=2"}));
  const auto rec = eval_records(out);
  ASSERT_EQ(rec.size(), 2u);
  ASSERT_TRUE(rec.count(2) && rec.count(4));
  const int64_t held_out_frames = 4 * kFrames;  // episodes 3, 4, 5, 6
  for (const auto& [step, j] : rec) {
    EXPECT_EQ(j["eval_samples"].get<int64_t>(), held_out_frames);
    EXPECT_EQ(j["eval_batches"].get<int64_t>(), held_out_frames / 4);
    EXPECT_TRUE(std::isfinite(j["eval_loss"].get<double>()));
  }
  EXPECT_NE(rec.at(2)["eval_loss"].get<double>(), rec.at(4)["eval_loss"].get<double>());  // it trained in between

  // The same loss from the step-2 checkpoint: the policy in eval mode over episodes 3..6 in index
  // order, batches of 4, the mean of the batch losses.
  const fs::path ck = out / "checkpoints" / "000002" / "pretrained_model";
  PolicyPtr policy = load_pretrained(ck, std::nullopt, torch::kCPU);
  PolicyProcessors processors = load_policy_processors(ck);
  policy->eval();
  LeRobotDatasetOptions o;
  o.episodes = std::vector<int64_t>{3, 4, 5, 6};
  const DatasetMetadata meta = load_dataset_metadata(tasks_dataset());
  o.delta_indices = resolve_delta_indices(meta, policy->config().observation_delta_indices(),
                                          policy->config().action_delta_indices());
  LeRobotDataset ds(tasks_dataset(), o);
  const auto frames = ds.absolute_indices();
  ASSERT_EQ(static_cast<int64_t>(frames.size()), held_out_frames);
  double sum = 0;
  int batches = 0;
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < frames.size(); b += 4) {
    std::vector<DatasetItem> items;
    for (size_t i = b; i < std::min(frames.size(), b + 4); ++i) items.push_back(ds.get_item(frames[i]));
    sum += policy->forward(prepare_batch(collate(items).tensors, processors, torch::kCPU)).loss.item<double>();
    ++batches;
  }
  const double expect = sum / batches;
  EXPECT_NEAR(rec.at(2)["eval_loss"].get<double>(), expect, 1e-6 * std::max(1.0, std::abs(expect)));

  // The TensorBoard events hold it under eval/eval_loss.
  bool found = false;
  for (const auto& e : fs::directory_iterator(out / "tensorboard")) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    found = found || bytes.find("eval/eval_loss") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

TEST(HeldOutLoss, MaxEvalSamplesCapsTheCount) {
  const fs::path out = train_scratch() / "heldout_cap";
  run_train(act_args(out, 1, {"--dataset.eval_split=0.3", "--eval_steps=1", "--max_eval_samples=5"}));
  const auto rec = eval_records(out);
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec.at(1)["eval_samples"].get<int64_t>(), 3);  // 3 held-out tasks, 5 // 3 = 1 frame each
  EXPECT_EQ(rec.at(1)["eval_batches"].get<int64_t>(), 1);
}

TEST(HeldOutLoss, OneAndTwoProcessesGiveTheSameValue) {
  // lr 0: both runs hold the seed's initial weights at step 1, so only the evaluation differs.
  std::map<int, double> loss;
  for (int procs : {1, 2}) {
    const fs::path out = train_scratch() / ("heldout_procs" + std::to_string(procs));
    std::string log;
    const int rc = run_cli("train --num_processes=" + std::to_string(procs) +
                               join_args(act_args(out, 1, {"--dataset.eval_split=0.3", "--eval_steps=1",
                                                           "--policy.optimizer_lr=0", "--policy.optimizer_lr_backbone=0",
                                                           "--batch_size=5"})),
                           &log);
    ASSERT_EQ(rc, 0) << log;
    const auto rec = eval_records(out);
    ASSERT_EQ(rec.size(), 1u) << log;
    EXPECT_EQ(rec.at(1)["eval_samples"].get<int64_t>(), 4 * kFrames);
    EXPECT_EQ(rec.at(1)["eval_batches"].get<int64_t>(), 10);  // 48 frames in batches of 5: the last holds 3
    loss[procs] = rec.at(1)["eval_loss"].get<double>();
    EXPECT_NE(log.find("eval_loss="), std::string::npos) << log;
  }
  EXPECT_NEAR(loss[1], loss[2], 1e-6 * std::max(1.0, std::abs(loss[1])));
}

TEST(HeldOutLoss, BadSplitsAreRefusedBeforeWork) {
  const fs::path out = train_scratch() / "heldout_bad";
  std::string log;
  EXPECT_EQ(run_cli("train" + join_args(act_args(out, 1, {"--dataset.eval_split=0.8"})), &log), 2) << log;
  EXPECT_NE(log.find("leaves 0 training episodes"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "checkpoints"));
  log.clear();
  EXPECT_EQ(run_cli("train" + join_args(act_args(out, 1, {"--eval_steps=5"})), &log), 2) << log;
  EXPECT_NE(log.find("requires dataset.eval_split"), std::string::npos) << log;
  log.clear();
  EXPECT_EQ(run_cli("train" + join_args(act_args(out, 1, {"--dataset.eval_split=1.0"})), &log), 2) << log;
  EXPECT_NE(log.find("[0.0, 1.0)"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "checkpoints"));
}
