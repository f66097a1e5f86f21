// pusht: gym_pusht's PushT-v0 (LeRobot's --env.type=pusht), ported: the same Chipmunk2D physics
// pymunk runs, the same reset draws (numpy's legacy RandomState), the same reward (coverage of the
// goal T) and the same camera (pygame's rasteriser on a 512x512 surface, then cv2.resize).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/envs/convex_overlap.h"
#include "lerobot/envs/vector_env.h"

struct cpSpace;
struct cpBody;
struct cpShape;

namespace lerobot {

// A kinematic disc (the agent, radius 15) is driven by a PD controller toward the commanded target
// (x, y) in [0, 512]^2 for 10 physics steps of 0.01 s per action; it pushes a T-shaped block (two
// boxes, mass 1, no friction, space damping 0 so it stops when not pushed) inside four walls. The
// goal is the T at (256, 256, pi/4). Reward: clip(coverage / 0.95, 0, 1), where coverage is the
// share of the goal T's area the block covers; success (terminates) when coverage > 0.95.
// Observation (obs_type): pixels_agent_pos, a 96x96 (--env.image_size) RGB image and the agent
// position (pixels, y down); or environment_state_agent_pos, the T's 8 keypoints (16 values,
// gym_pusht's get_keypoints) and the agent position (the image is still rendered, for videos).
enum class PushTObservation {
  kPixels,     // obs_type pixels_agent_pos (LeRobot's default)
  kKeypoints,  // obs_type environment_state_agent_pos
};

class PushTEnv : public Env {
 public:
  static constexpr double kSuccessThreshold = 0.95;
  static constexpr double kDt = 0.01;
  static constexpr double kKp = 100.0, kKv = 20.0;
  static constexpr int kWorld = 512;  // the pygame surface is kWorld x kWorld pixels

  explicit PushTEnv(EnvSpec spec, PushTObservation observation = PushTObservation::kPixels);
  ~PushTEnv() override;
  const EnvSpec& spec() const override { return spec_; }
  // numpy.random.RandomState(seed) draws the start: agent (x, y), block (x, y, angle). The seed
  // must fit numpy's legacy seeding (below 2^32).
  void reset(uint64_t seed) override;
  StepInfo step(const float* action) override;
  void render(uint8_t* rgb) const override;
  // gym_pusht's render() (LeRobot's evaluation videos): the 512x512 surface resized to the
  // visualization size (--env.visualization_width/height, 384), with a red cross where the last
  // action pointed. As in gym_pusht, the last action outlives a reset (a fresh env has none).
  void render_video(uint8_t* rgb) const override;
  void get_state(float* state) const override;
  void get_env_state(float* env_state) const override;
  // gym_pusht's get_keypoints: each box's vertices turned by the block's angle and moved by its
  // position (not its centre of gravity), (x0, y0, ..., x7, y7).
  std::array<double, 16> keypoints() const;

  // gym_pusht's reset_to_state option: [agent_x, agent_y, block_x, block_y, block_angle].
  void reset_to_state(const std::array<double, 5>& state);
  // The 512x512 RGB surface before it is resized (gym_pusht's _draw).
  std::vector<uint8_t> draw_surface() const;
  // Share of the goal T covered by the block, in [0, 1] (gym_pusht's _get_coverage).
  double coverage() const;
  std::array<double, 2> agent_position() const;
  std::array<double, 2> agent_velocity() const;
  std::array<double, 3> block_pose() const;  // x, y, angle (radians, not wrapped), as info["block_pose"]

 private:
  void setup();
  void teardown();
  // gym_pusht's _get_img without the marker: the surface resized to height x width (cv2.resize).
  void draw_resized(uint8_t* rgb, int height, int width) const;

  EnvSpec spec_;
  cpSpace* space_ = nullptr;
  cpBody* agent_ = nullptr;
  cpBody* block_ = nullptr;
  std::vector<cpShape*> shapes_;   // walls, agent, block parts (freed with the space)
  std::array<cpShape*, 2> tee_{};  // the block's two boxes, in gym_pusht's order
  bool has_last_action_ = false;
  std::array<float, 2> last_action_{};
  std::vector<std::vector<Point2d>> goal_tee_;  // the goal T's boxes in the world (setup() makes them)
  double goal_area_ = 0.0;
};

}  // namespace lerobot
