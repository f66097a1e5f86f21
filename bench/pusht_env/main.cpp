// bench_pusht_env: one PushT env on one thread, stepped by the pusher of the reference script
// (scripts/pusht_reference/gym_pusht_reference.py) over seeds 0..episodes-1, 40 actions each.
// Prints the median ms per action for: the step with the 96x96 camera (what an evaluation does),
// the physics and reward alone, the camera alone, and the 384x384 rendered view of the evaluation
// videos (gym_pusht's render()). peer.py times gym_pusht the same way; run.sh runs both in one go
// and prints the ratios.
// Usage: bench_pusht_env [episodes=30]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lerobot/envs/env_config.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/envs/pusht.h"

using namespace lerobot;

namespace {

// The reference script's pusher: aim past the block's centre from the agent's side, wobbling.
void pusher(const PushTEnv& env, int t, float* action) {
  const auto agent = env.agent_position();
  const auto block = env.block_pose();
  const double dx = block[0] - agent[0], dy = block[1] - agent[1];
  const double n = std::sqrt(dx * dx + dy * dy) + 1e-9;
  const double w = 25.0 * std::sin(0.7 * t);
  action[0] = static_cast<float>(block[0] + dx / n * 40.0 - dy / n * w);
  action[1] = static_cast<float>(block[1] + dy / n * 40.0 + dx / n * w);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

enum class Part { kStepAndCamera, kStepOnly, kCameraOnly, kVideoOnly };

// Milliseconds per action, one figure per episode.
std::vector<double> run(PushTEnv& env, int episodes, Part part) {
  std::vector<double> per_episode;
  std::vector<uint8_t> image(96 * 96 * 3), view(static_cast<size_t>(env.spec().video_w() * env.spec().video_h() * 3));
  float action[2];
  for (int e = 0; e < episodes; ++e) {
    env.reset(static_cast<uint64_t>(e));
    double ms = 0.0;
    for (int t = 0; t < 40; ++t) {
      pusher(env, t, action);
      const auto t0 = std::chrono::steady_clock::now();
      const bool render_only = part == Part::kCameraOnly || part == Part::kVideoOnly;
      if (!render_only) env.step(action);
      if (part == Part::kVideoOnly) env.render_video(view.data());
      else if (part != Part::kStepOnly) env.render(image.data());
      ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (render_only) env.step(action);
    }
    per_episode.push_back(ms / 40);
  }
  return per_episode;
}

}  // namespace

int main(int argc, char** argv) {
  const int episodes = argc > 1 ? std::atoi(argv[1]) : 30;
  PushtEnvConfig cfg;
  auto base = make_single_env(cfg);
  auto& env = dynamic_cast<PushTEnv&>(*base);
  run(env, 2, Part::kStepAndCamera);  // warm-up
  const double all = median(run(env, episodes, Part::kStepAndCamera));
  const double physics = median(run(env, episodes, Part::kStepOnly));
  const double camera = median(run(env, episodes, Part::kCameraOnly));
  const double video = median(run(env, episodes, Part::kVideoOnly));
  std::printf("pusht step with camera: median %.4f ms/step (%d episodes x 40 actions)\n", all, episodes);
  std::printf("pusht physics and reward: median %.4f ms/step\n", physics);
  std::printf("pusht camera (512x512 drawing, resize to 96x96): median %.4f ms/step\n", camera);
  std::printf("pusht rendered view (512x512 drawing, resize to 384x384, action cross): median %.4f ms/frame\n", video);
  return 0;
}
