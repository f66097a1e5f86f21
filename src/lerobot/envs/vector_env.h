// Env (one simulated task instance) and VectorEnv (N instances stepped together, as a batch).
//
// Conventions shared by every built-in task:
//  - world coordinates are the unit square [0,1]^2; x grows to the right, y grows downwards, so
//    pixel (row, col) of the camera covers world x in [col, col+1)/S and y in [row, row+1)/S;
//  - observation: an RGB image, uint8, (S, S, 3) HWC, S = image_size, and a float state vector
//    (the agent position (x, y) in world units);
//  - action: the 2-D target position (x, y) the agent should move to, in world units (clamped to
//    the arena); the agent moves toward it at a bounded speed;
//  - reward is in [0, 1] and equals 1 exactly on a success step; terminated = success,
//    truncated = time limit (episode_length steps) without success; is_success = success.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lerobot {

struct EnvSpec {
  std::string task;
  int64_t image_size = 96;
  int64_t state_dim = 2;
  int64_t action_dim = 2;
  int64_t fps = 10;
  int64_t episode_length = 100;
  float action_low = 0.0f;   // every action component lies in [action_low, action_high]
  float action_high = 1.0f;
  // LeRobot feature names of the observation / action (as in the pusht env mapping).
  std::string image_key = "observation.image";
  std::string state_key = "observation.state";
  std::string action_key = "action";
  // Whether the camera image is part of the observation (it is still rendered for videos), and
  // the size of an environment-state vector (LeRobot's observation.environment_state; 0: none).
  bool image_observed = true;
  int64_t env_state_dim = 0;
  std::string env_state_key = "observation.environment_state";
  // Size of an evaluation video frame (Env::render_video); 0 means the camera's image_size.
  int64_t video_width = 0, video_height = 0;
  int64_t video_w() const { return video_width > 0 ? video_width : image_size; }
  int64_t video_h() const { return video_height > 0 ? video_height : image_size; }
};

struct StepInfo {
  float reward = 0.0f;
  bool terminated = false;  // success reached (episode over)
  bool truncated = false;   // episode_length steps done without success
  bool is_success = false;
};

class Env {
 public:
  virtual ~Env() = default;
  virtual const EnvSpec& spec() const = 0;
  // Starts a new episode; everything random comes from `seed` (same seed -> same episode).
  virtual void reset(uint64_t seed) = 0;
  // Applies the target position action[0..1]. Stepping a finished episode (done()) changes
  // nothing and returns reward 0 with the final flags repeated.
  virtual StepInfo step(const float* action) = 0;
  // Writes the camera image, image_size*image_size*3 bytes, HWC RGB.
  virtual void render(uint8_t* rgb) const = 0;
  // Writes the frame an evaluation video shows (LeRobot records env.render()), video_h() rows of
  // video_w() pixels, HWC RGB. By default the camera image.
  virtual void render_video(uint8_t* rgb) const { render(rgb); }
  // Writes the state vector (state_dim floats): the agent position.
  virtual void get_state(float* state) const = 0;
  // Writes the environment state (env_state_dim floats), for tasks that have one.
  virtual void get_env_state(float* env_state) const {}
  int64_t elapsed_steps() const { return steps_; }
  bool done() const { return last_.terminated || last_.truncated; }
  const StepInfo& last_info() const { return last_; }

 protected:
  // Shared bookkeeping for subclasses: counts the step and sets the flags from `success`.
  StepInfo finish_step(bool success, float reward);
  // What step() returns on a finished episode: the final flags again, reward 0.
  StepInfo finished_step() const {
    StepInfo same = last_;
    same.reward = 0.0f;
    return same;
  }
  void begin_episode() { steps_ = 0; last_ = StepInfo{}; }
  int64_t steps_ = 0;
  StepInfo last_;
};

// N environments of one task stepped together. Observations and step results live in contiguous
// row-major buffers (env index first), refreshed by reset() and step().
class VectorEnv {
 public:
  // num_threads > 1 steps and renders the envs on that many threads (results are identical).
  explicit VectorEnv(std::vector<std::unique_ptr<Env>> envs, int num_threads = 1);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  int64_t num_envs() const { return static_cast<int64_t>(envs_.size()); }
  const EnvSpec& spec() const { return envs_.front()->spec(); }
  Env& env(int64_t i) { return *envs_.at(i); }
  const Env& env(int64_t i) const { return *envs_.at(i); }

  // One seed per env (seeds.size() == num_envs()); rewards/flags are cleared.
  void reset(const std::vector<uint64_t>& seeds);
  // actions: num_envs * action_dim floats, row-major (N, A).
  void step(const float* actions);
  void step(const std::vector<float>& actions);

  const std::vector<uint8_t>& images() const { return images_; }  // (N, S, S, 3)
  const std::vector<float>& states() const { return states_; }    // (N, state_dim)
  const std::vector<float>& env_states() const { return env_states_; }  // (N, env_state_dim)
  const std::vector<float>& rewards() const { return rewards_; }  // (N)
  const std::vector<uint8_t>& terminated() const { return terminated_; }  // (N), 0/1
  const std::vector<uint8_t>& truncated() const { return truncated_; }    // (N), 0/1
  const std::vector<uint8_t>& is_success() const { return is_success_; }  // (N), 0/1
  bool all_done() const;

 private:
  template <class F>
  void parallel_for(F&& f);
  void observe(int64_t i);

  std::vector<std::unique_ptr<Env>> envs_;
  int num_threads_ = 1;
  std::vector<uint8_t> images_;
  std::vector<float> states_, env_states_, rewards_;
  std::vector<uint8_t> terminated_, truncated_, is_success_;
};

}  // namespace lerobot
