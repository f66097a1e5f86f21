// DatasetConfig (--dataset.*), as LeRobot's configs/default.py declares it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"
#include "lerobot/datasets/image_transforms.h"

namespace lerobot {

struct ImageTransformsConfig : Config {
  bool enable = false;
  int64_t max_num_transforms = 3;
  bool random_order = false;
  // {name: {"weight": w, "type": T, "kwargs": {...}}}, in application order (LeRobot's default set).
  Json tfs = default_image_transforms_tfs();
  void visit(FieldVisitor& v) override {
    field(v, "enable", enable, "Apply random image augmentations while training");
    field(v, "max_num_transforms", max_num_transforms, "Transforms sampled per frame");
    field(v, "random_order", random_order, "Apply the sampled transforms in random order");
    field(v, "tfs", tfs,
          "Transforms {name: {weight, type, kwargs}} (a whole dict, or one entry's key: "
          "--dataset.image_transforms.tfs.brightness.weight=2)");
  }
  void validate() const override;  // image_transforms.cpp: types and kwargs checked when enabled
};

struct DatasetConfig : Config {
  std::string repo_id;
  std::string repo_type = "dataset";
  std::optional<std::string> root;
  std::optional<std::vector<int64_t>> episodes;
  std::optional<std::vector<int64_t>> exclude_episodes;
  ImageTransformsConfig image_transforms;
  std::optional<std::string> revision;
  bool use_imagenet_stats = true;
  std::string video_backend = "pyav";
  bool return_uint8 = false;
  std::string depth_output_unit = "mm";
  bool streaming = false;
  double eval_split = 0.0;

  void visit(FieldVisitor& v) override {
    field(v, "repo_id", repo_id, "Hub dataset id (org/name): without --dataset.root it is fetched into $HF_LEROBOT_HOME/hub");
    field(v, "repo_type", repo_type, "Hub repo type");
    field(v, "root", root, "Local LeRobot dataset directory (v3.0 or v2.1)");
    field(v, "episodes", episodes, "Episode indices to use, e.g. '[0,1,2]' (all when null)");
    field(v, "exclude_episodes", exclude_episodes, "Episode indices to leave out");
    field(v, "image_transforms", image_transforms, "Image augmentation");
    field(v, "revision", revision, "Dataset revision");
    field(v, "use_imagenet_stats", use_imagenet_stats, "Normalize cameras with ImageNet mean/std");
    field(v, "video_backend", video_backend, "Video decoder name (decoding always uses FFmpeg here)");
    field(v, "return_uint8", return_uint8, "Return camera frames as uint8");
    field(v, "depth_output_unit", depth_output_unit, "Unit of depth maps");
    field(v, "streaming", streaming, "Stream from the hub (not supported)");
    field(v, "eval_split", eval_split, "Fraction of episodes per task held out for eval loss");
  }
};

}  // namespace lerobot
