// #18 point 5, image-feature datasets end to end through the CLI: the built-in sim recording with
// LeRobot's --dataset.video=false writes the camera as PNGs in the parquet; `dataset info`,
// `validate` and `stats` handle it; a tiny ACT run trains on it and `infer --dataset.root --frame`
// runs the checkpoint on one of its frames.
#include <gtest/gtest.h>

#include "lerobot/common/config/json.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;

TEST(ImageDatasetTrain, RecordedWithoutVideoTrainsAndInfers) {
  const fs::path ds = train_scratch() / "reach2d_images";
  std::string log;
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=3 --env.image_size=32 --dataset.video=false "
                    "--output_dir=" + ds.string(), &log), 0) << log;
  EXPECT_NE(log.find("OK"), std::string::npos) << log;
  const Json info = load_json_or_yaml(ds / "meta/info.json");
  EXPECT_EQ(info["features"]["observation.image"]["dtype"], "image");
  EXPECT_TRUE(info["video_path"].is_null());
  EXPECT_FALSE(fs::exists(ds / "videos"));

  log.clear();
  ASSERT_EQ(run_cli("dataset info " + ds.string(), &log), 0) << log;
  EXPECT_NE(log.find("png"), std::string::npos) << log;
  log.clear();
  ASSERT_EQ(run_cli("dataset validate " + ds.string(), &log), 0) << log;
  EXPECT_NE(log.find("OK"), std::string::npos) << log;
  log.clear();
  ASSERT_EQ(run_cli("dataset stats " + ds.string(), &log), 0) << log;
  EXPECT_NE(log.find("stats match"), std::string::npos) << log;
  EXPECT_EQ(log.find("not recomputed"), std::string::npos) << log;

  const fs::path out = train_scratch() / "image_run";
  log.clear();
  ASSERT_EQ(run_cli("train" + join_args(tiny_act_run(out, 2, {"--dataset.root=" + ds.string()})), &log), 0) << log;
  const fs::path ck = out / "checkpoints" / "last" / "pretrained_model";
  const Json config = load_json_or_yaml(ck / "config.json");
  const Json& image = config["input_features"]["observation.image"];
  EXPECT_EQ(image["type"], "VISUAL") << config["input_features"].dump();
  EXPECT_EQ(image["shape"], Json::array({3, 32, 32}));

  log.clear();
  ASSERT_EQ(run_cli("infer --policy.path=" + ck.string() + " --dataset.root=" + ds.string() + " --frame=3", &log), 0) << log;
  EXPECT_NE(log.find("action chunk 5 x 2"), std::string::npos) << log;
  EXPECT_NE(log.find("recorded action at that frame"), std::string::npos) << log;
}
