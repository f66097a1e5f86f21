// EnvConfig (--env.type=reach2d|push2d|pusht): the simulated tasks' settings.
#pragma once

#include <string>
#include <utility>

#include "lerobot/common/config/config.h"
#include "lerobot/common/error.h"

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

// LeRobot's PushtEnv (gym_pusht's PushT-v0): its fields, defaults and order (train_config.json
// carries them for Python LeRobot), then ours. As in LeRobot, observation_height/width are not
// passed to the env (its camera is 96x96: --env.image_size here, kept in lerobot_cpp_config.json),
// and visualization_* size the rendered view of the evaluation videos, not the policy's input.
class PushtEnvConfig : public EnvConfig {
 public:
  Json features = Json::parse(
      R"({"action": {"type": "ACTION", "shape": [2]}, "agent_pos": {"type": "STATE", "shape": [2]},
          "pixels": {"type": "VISUAL", "shape": [384, 384, 3]}})");
  Json features_map = Json::parse(
      R"({"action": "action", "agent_pos": "observation.state",
          "environment_state": "observation.environment_state", "pixels": "observation.image"})");
  int64_t max_parallel_tasks = 1;
  bool disable_env_checker = true;
  std::string obs_type = "pixels_agent_pos";
  std::string render_mode = "rgb_array";
  int64_t visualization_width = 384, visualization_height = 384;
  int64_t observation_height = 384, observation_width = 384;
  PushtEnvConfig() {
    task = "PushT-v0";
    episode_length = 300;
  }
  std::string type() const override { return "pusht"; }
  bool keypoints() const { return obs_type == "environment_state_agent_pos"; }
  // Runs once all flags are in (validate_tree), so a run is refused before it starts.
  void validate() const override {
    if (obs_type != "pixels_agent_pos" && !keypoints())
      throw_usage("obs_type '" + obs_type + "' is not supported: the PushT port observes the camera or the T's keypoints, with the agent position",
                  "--env.obs_type", "use --env.obs_type=pixels_agent_pos (LeRobot's default) or environment_state_agent_pos");
    if (render_mode != "rgb_array")
      throw_usage("render_mode '" + render_mode + "' is not supported (no window)", "--env.render_mode",
                  "use --env.render_mode=rgb_array");
    for (const auto& [flag, v] : {std::pair<const char*, int64_t>{"--env.visualization_width", visualization_width},
                                  {"--env.visualization_height", visualization_height}})
      if (v < 16 || v > 4096 || v % 2 != 0)
        throw_usage(std::string(flag).substr(6) + " " + std::to_string(v) +
                        " cannot size the evaluation videos (H.264 in yuv420p needs an even size)",
                    flag, "use an even size in [16, 4096], e.g. LeRobot's 384");
  }
  void visit(FieldVisitor& v) override {
    field(v, "task", task, "gym_pusht task (PushT-v0)");
    field(v, "fps", fps, "Control frequency: PushT's physics runs 10 steps of 10 ms per action, so 10");
    field(v, "features", features, "LeRobot's env features (recorded for Python LeRobot)");
    field(v, "features_map", features_map, "LeRobot's env-to-policy feature names (recorded for Python LeRobot)");
    field(v, "max_parallel_tasks", max_parallel_tasks, "LeRobot's (one task here)");
    field(v, "disable_env_checker", disable_env_checker, "LeRobot's gym env checker switch (no checker here)");
    field(v, "episode_length", episode_length, "Maximum steps per episode");
    field(v, "obs_type", obs_type, "Observation: pixels_agent_pos (the camera image and the agent position)");
    field(v, "render_mode", render_mode, "rgb_array");
    field(v, "visualization_width", visualization_width, "Width of the evaluation videos (gym_pusht's render(); not the policy's input)");
    field(v, "visualization_height", visualization_height, "Height of the evaluation videos (gym_pusht's render(); not the policy's input)");
    field(v, "observation_height", observation_height, "Not passed to the env by LeRobot (its camera is 96x96: image_size)");
    field(v, "observation_width", observation_width, "Not passed to the env by LeRobot (its camera is 96x96: image_size)");
    field(v, "image_size", image_size, "Camera image height and width in pixels (gym_pusht's observation size, 96)");
  }
};

inline void register_env_configs() {
  Registry<EnvConfig>::add("reach2d", [] { return std::make_unique<Reach2dEnvConfig>(); });
  Registry<EnvConfig>::add("push2d", [] { return std::make_unique<Push2dEnvConfig>(); });
  Registry<EnvConfig>::add("pusht", [] { return std::make_unique<PushtEnvConfig>(); });
}

}  // namespace lerobot
