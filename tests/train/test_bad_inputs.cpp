// #15 defects 2-4 and 6-7 through the built lerobot-cpp: every bad input gets its documented exit
// code and a message naming the flag or file, before any work starts; nothing escapes raw.
#include <gtest/gtest.h>

#include <cstdlib>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

// Runs the CLI, expects exit `code` and every word of `words` in its output; returns the output.
std::string expect_cli(const std::string& args, int code, const std::vector<std::string>& words) {
  std::string out;
  EXPECT_EQ(run_cli(args, &out), code) << args << "\n" << out;
  for (const auto& w : words) EXPECT_NE(out.find(w), std::string::npos) << "'" << w << "' not in:\n" << out;
  EXPECT_EQ(out.find("error (LibTorch)"), std::string::npos) << out;
  return out;
}

std::string train_args(const fs::path& out, std::vector<std::string> extra = {}, int64_t steps = 1) {
  return "train" + join_args(tiny_act_run(out, steps, std::move(extra)));
}

TEST(BadInputs, ABatchLargerThanTheDatasetIsCappedToIt) {
  const fs::path out = train_scratch() / "huge_batch";
  const int64_t frames = load_dataset_metadata(reach2d_dataset()).total_frames;
  expect_cli(train_args(out, {"--batch_size=1000000"}), 0,
             {"--batch_size=1000000 is larger than the " + std::to_string(frames), "--batch_size=" + std::to_string(frames)});
  const Json cfg = load_json_or_yaml(out / "checkpoints/last/pretrained_model/train_config.json");
  EXPECT_EQ(cfg["batch_size"].get<int64_t>(), frames);
}

TEST(BadInputs, AMetaFileLinkedToDevZeroIsADataError) {
  const fs::path root = copy_dataset("devzero");
  fs::remove(root / "meta/stats.json");
  fs::create_symlink("/dev/zero", root / "meta/stats.json");
  expect_cli("dataset info " + root.string(), 3, {"stats.json", "not a regular file"});
}

TEST(BadInputs, ResumeWithoutConfigPathIsAUsageError) {
  expect_cli("train --resume=true", 2, {"--config_path"});
}

TEST(BadInputs, AnOutputDirUnderAFileOrEmptyIsAUsageError) {
  const fs::path file = train_scratch() / "a_file";
  write_file_atomic(file, "x");
  expect_cli(train_args(file / "run"), 2, {"--output_dir", file.string()});
  expect_cli(train_args(file), 2, {"--output_dir"});
  std::string args = train_args(train_scratch() / "unused");
  args.replace(args.find("--output_dir="), std::string("--output_dir=" + (train_scratch() / "unused").string()).size(),
               "--output_dir=");
  expect_cli(args, 2, {"--output_dir is empty"});
}

TEST(BadInputs, StatsOfTheWrongShapeOrMissingAreDataErrors) {
  const fs::path wrong = copy_dataset("stats_shape");
  edit_json(wrong / "meta/stats.json", [](Json& j) { j["observation.state"]["mean"] = Json::array({1.0, 2.0, 3.0}); });
  expect_cli("train" + join_args(tiny_act_run(train_scratch() / "o1", 1, {"--dataset.root=" + wrong.string()})), 3,
             {"stats.json", "observation.state/mean", "(3,)"});
  const fs::path missing_key = copy_dataset("stats_key");
  edit_json(missing_key / "meta/stats.json", [](Json& j) { j.erase("action"); });
  expect_cli("train" + join_args(tiny_act_run(train_scratch() / "o2", 1, {"--dataset.root=" + missing_key.string()})),
             3, {"stats.json", "'action' has no stats"});
  const fs::path no_file = copy_dataset("stats_file");
  fs::remove(no_file / "meta/stats.json");
  expect_cli("train" + join_args(tiny_act_run(train_scratch() / "o3", 1, {"--dataset.root=" + no_file.string()})), 3,
             {"stats.json", "has no stats"});
}

// Metadata that contradicts info.json is refused where it is read, naming the file, the episode and
// the key, by train and dataset validate alike; none of it reaches LibTorch (a v2.1 episode's stats
// vector one value short used to end in "error (LibTorch): The size of tensor a (6) must match the
// size of tensor b (5)", exit 1). tests/datasets/test_meta_mutations.cpp corrupts a real dataset's
// files case by case; these are a trainable dataset's.
TEST(BadInputs, MetadataThatContradictsInfoJsonIsNamedWhereItIsRead) {
  const fs::path channels = copy_dataset("stats_channels");
  edit_json(channels / "meta/stats.json",
            [](Json& j) { j["observation.image"]["std"].push_back(Json::array({Json::array({0.1})})); });
  const fs::path shape = copy_dataset("info_shape");
  edit_json(shape / "meta/info.json", [](Json& j) { j["features"]["action"]["shape"] = Json::array({0}); });
  for (const auto& [root, words] : std::vector<std::pair<fs::path, std::vector<std::string>>>{
           {channels, {"meta/stats.json", "'observation.image/std' has 4 value(s)", "one per channel"}},
           {shape, {"meta/info.json", "feature 'action'", "shape [0]"}}}) {
    expect_cli("train" + join_args(tiny_act_run(train_scratch() / ("o_" + root.filename().string()), 1,
                                                {"--dataset.root=" + root.string()})),
               3, words);
    expect_cli("dataset validate " + root.string(), 3, words);
  }
}

TEST(BadInputs, InferWithAWronglySizedStateOrAChunkSizeZeroCheckpoint) {
  const fs::path out = train_scratch() / "infer_src";
  expect_cli(train_args(out), 0, {});
  const fs::path model = out / "checkpoints/last/pretrained_model";
  const fs::path obs = train_scratch() / "obs.safetensors";
  save_safetensors(obs, {{"observation.image", torch::zeros({64, 64, 3}, torch::kUInt8)},
                         {"observation.state", torch::zeros({3})}});
  expect_cli("infer --policy.path=" + model.string() + " --observation=" + obs.string(), 3,
             {"observation.state", "[3]", obs.string()});
  const fs::path zero = train_scratch() / "chunk0";
  fs::copy(model, zero, fs::copy_options::recursive);
  edit_json(zero / "config.json", [](Json& j) { j["chunk_size"] = 0; j["n_action_steps"] = 0; });
  expect_cli("infer --policy.path=" + zero.string() + " --observation=" + obs.string(), 4,
             {"chunk_size", "config.json"});
}

TEST(BadInputs, ValuesThatWereAcceptedAndWrongAreUsageErrors) {
  const fs::path out = train_scratch() / "never";
  expect_cli(train_args(out, {"--num_processes=0"}), 2, {"--num_processes"});
  expect_cli(train_args(out, {"--num_processes=-2"}), 2, {"--num_processes"});
  expect_cli(train_args(out, {"--policy.chunk_size=0", "--policy.n_action_steps=0"}), 2, {"chunk_size"});
  expect_cli(train_args(out, {"--tolerance_s=-1"}), 2, {"tolerance_s"});
  // W&B needs a Python with wandb (test_wandb.cpp has the runs): one that cannot be started is named.
  ::setenv("LEROBOT_CPP_PYTHON", "/nonexistent/python3", 1);
  expect_cli(train_args(out, {"--wandb.enable=true"}), 2, {"--wandb.enable", "/nonexistent/python3", "pip install wandb"});
  ::unsetenv("LEROBOT_CPP_PYTHON");
  // Publishing is checked before any work: no repo id, then no token (HF_TOKEN unset and no token file).
  expect_cli(train_args(out, {"--policy.push_to_hub=true"}), 2, {"--policy.repo_id", "--policy.push_to_hub=false"});
  {
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "HF_HUB_OFFLINE"}) {
      if (const char* v = std::getenv(n)) saved.emplace_back(n, v);
      ::unsetenv(n);
    }
    ::setenv("HF_HOME", (train_scratch() / "no_token_home").c_str(), 1);
    expect_cli(train_args(out, {"--policy.push_to_hub=true", "--policy.repo_id=me/act"}), 2, {"HF_TOKEN", "hf auth login"});
    ::unsetenv("HF_HOME");
    for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
  }
  // Augmentation entries are checked before any work: an unknown type lists the known ones, a kwarg
  // out of range names its key.
  expect_cli(train_args(out, {"--dataset.image_transforms.enable=true", "--dataset.image_transforms.tfs.blur.type=Blurr"}),
             2, {"dataset.image_transforms.tfs.blur.type", "ColorJitter", "SharpnessJitter", "RandomAffine"});
  expect_cli(train_args(out, {"--dataset.image_transforms.enable=true",
                              "'--dataset.image_transforms.tfs.hue.kwargs.hue=[-0.7,0.1]'"}),
             2, {"dataset.image_transforms.tfs.hue.kwargs.hue", "-0.5"});
  expect_cli(train_args(out, {"--dataset.image_transforms.enable=true",
                              "--dataset.image_transforms.tfs.sharpness.kwargs.sharpnes=2"}),
             2, {"sharpnes", "valid kwargs: sharpness"});
  expect_cli(train_args(out, {"--eval_steps=5"}), 2, {"eval_steps"});
  expect_cli(train_args(out, {"--policy.use_peft=true"}), 2, {"policy.use_peft"});
  expect_cli("dataset validate " + reach2d_dataset().string() + " --require_video", 2,
             {"--require_video", "did you mean '--require_videos'"});
  expect_cli("dataset info " + reach2d_dataset().string() + " --verbose", 2, {"--verbose"});
  EXPECT_FALSE(fs::exists(out));
}

TEST(BadInputs, VideosThatContradictInfoJsonAreDataErrors) {
  const fs::path fps = copy_dataset("fps");
  edit_json(fps / "meta/info.json", [](Json& j) { j["fps"] = 25; });
  expect_cli("train" + join_args(tiny_act_run(train_scratch() / "o4", 1, {"--dataset.root=" + fps.string()})), 3,
             {".mp4", "fps"});
  const fs::path size = copy_dataset("size");
  edit_json(size / "meta/info.json", [](Json& j) {
    j["features"]["observation.image"]["shape"] = Json::array({48, 48, 3});
  });
  expect_cli("train" + join_args(tiny_act_run(train_scratch() / "o5", 1, {"--dataset.root=" + size.string()})), 3,
             {".mp4", "64x64", "48x48"});
}

fs::path truncated_video_dataset() {
  const fs::path root = copy_dataset("truncated_video");
  for (const auto& e : fs::recursive_directory_iterator(root / "videos"))
    if (e.path().extension() == ".mp4") fs::resize_file(e.path(), fs::file_size(e.path()) * 6 / 10);
  return root;
}

// Defect 5: validate decodes the last frame each file must hold, which a truncated file lacks.
TEST(BadInputs, ValidateRequireVideosFindsATruncatedVideo) {
  expect_cli("dataset validate " + reach2d_dataset().string() + " --require_videos", 0, {"OK"});
  expect_cli("dataset validate " + truncated_video_dataset().string() + " --require_videos", 3,
             {"cannot be decoded", ".mp4"});
}

// #18: a dataset shared without its mp4 files is not "OK"; a near-miss folder is named.
TEST(BadInputs, ValidateSaysPlainlyWhenEveryVideoIsMissing) {
  const fs::path root = copy_dataset("no_videos");
  fs::rename(root / "videos", root / "video");
  expect_cli("dataset validate " + root.string(), 3, {"are missing", "'video/'", "rename it"});
  fs::remove_all(root / "video");
  const std::string out = expect_cli("dataset validate " + root.string(), 3, {"are missing", "--allow_missing_videos"});
  EXPECT_EQ(out.find("\nOK"), std::string::npos) << out;
  expect_cli("dataset validate " + root.string() + " --allow_missing_videos", 0, {"videos/ is absent", "OK (with the notes above)"});
  expect_cli("dataset validate " + root.string() + " --allow_missing_videos --require_videos", 2, {"contradict"});
}

// Defect 6: a run that stops before step 1 leaves only empty logs, and the same command works
// once the input is fixed.
TEST(BadInputs, ARunThatFailsBeforeStepOneCanBeRunAgain) {
  const fs::path out = train_scratch() / "again";
  std::string text;
  // The whole dataset in one batch: the first step needs frames the truncated file lacks.
  const int rc = run_cli("train" + join_args(tiny_act_run(out, 1, {"--dataset.root=" + truncated_video_dataset().string(),
                                                                   "--batch_size=1000000"})),
                         &text);
  ASSERT_NE(rc, 0) << text;
  EXPECT_TRUE(rc == 3) << text;
  if (fs::exists(out)) {
    EXPECT_FALSE(fs::exists(out / "checkpoints"));
  }
  expect_cli(train_args(out), 0, {});
  EXPECT_TRUE(fs::exists(out / "checkpoints/last/pretrained_model/model.safetensors"));
}

// Resuming on another number of processes or with another batch size (a node lost, a smaller
// machine) goes on with a warning, as LeRobot's: the data order resumes at the checkpoint's offset.
TEST(Resume, AnotherProcessCountOrBatchSizeWarnsAndGoesOn) {
  const fs::path out = train_scratch() / "resume_other_layout";
  expect_cli(train_args(out, {"--save_freq=2"}, 2), 0, {});
  const fs::path ckpts = out / "checkpoints";
  expect_cli("train --resume=true --config_path=" + (ckpts / "000002/pretrained_model").string() +
                 " --steps=4 --batch_size=2 --num_processes=2",
             0,
             {"Resuming with 2 process(es) but the checkpoint was written by 1",
              "Resuming with batch_size 2 but the checkpoint was trained with 4"});
  const Json step = load_json_or_yaml(ckpts / "000004/training_state/training_step.json");
  EXPECT_EQ(step["step"], 4);
  EXPECT_EQ(step["batch_size"], 2);
  EXPECT_EQ(step["dp_world_size"], 2);
}

// Defect 7: resuming an older checkpoint would write behind the newest one and move `last` back.
TEST(BadInputs, ResumingBehindTheNewestCheckpointIsRefused) {
  const fs::path out = train_scratch() / "resume_back";
  expect_cli(train_args(out, {"--save_freq=2"}, 4), 0, {});
  const fs::path ckpts = out / "checkpoints";
  expect_cli("train --resume=true --config_path=" + (ckpts / "000002/pretrained_model").string() + " --steps=3", 2,
             {"already has step 4", "--config_path"});
  EXPECT_EQ(fs::read_symlink(ckpts / "last"), fs::path("000004"));
  EXPECT_FALSE(fs::exists(ckpts / "000003"));
  expect_cli("train --resume=true --config_path=" + (ckpts / "last/pretrained_model").string() + " --steps=4", 2,
             {"--steps=4", "nothing to train"});
  // Continuing the older checkpoint into a new directory is the way offered, and it works.
  expect_cli("train --resume=true --config_path=" + (ckpts / "000002/pretrained_model").string() +
                 " --steps=3 --output_dir=" + (train_scratch() / "resume_branch").string(),
             0, {});
  EXPECT_TRUE(fs::exists(train_scratch() / "resume_branch/checkpoints/000003"));
  EXPECT_EQ(fs::read_symlink(ckpts / "last"), fs::path("000004"));
}

}  // namespace
}  // namespace lerobot
