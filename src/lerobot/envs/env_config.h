// EnvConfig (--env.type=reach2d|push2d): the built-in simulated tasks' settings.
#pragma once

#include <string>

#include "lerobot/common/config/config.h"

namespace lerobot {

class EnvConfig : public ChoiceConfig {
 public:
  std::string task;
  int64_t fps = 10;
  int64_t episode_length = 100;
  int64_t image_size = 96;  // square RGB camera, pixels
  void visit(FieldVisitor& v) override {
    field(v, "task", task, "Task name");
    field(v, "fps", fps, "Control frequency (frames per second)");
    field(v, "episode_length", episode_length, "Maximum steps per episode");
    field(v, "image_size", image_size, "Camera image height and width in pixels");
  }
};

class Reach2dEnvConfig : public EnvConfig {
 public:
  Reach2dEnvConfig() {
    task = "reach2d";
    episode_length = 60;
  }
  std::string type() const override { return "reach2d"; }
};

class Push2dEnvConfig : public EnvConfig {
 public:
  Push2dEnvConfig() {
    task = "push2d";
    episode_length = 200;
  }
  std::string type() const override { return "push2d"; }
};

inline void register_env_configs() {
  Registry<EnvConfig>::add("reach2d", [] { return std::make_unique<Reach2dEnvConfig>(); });
  Registry<EnvConfig>::add("push2d", [] { return std::make_unique<Push2dEnvConfig>(); });
}

}  // namespace lerobot
