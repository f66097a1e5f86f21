// robot_loop: a robot's control loop on lerobot.cpp's C++ API, with no Python. It loads a trained
// policy (a .../checkpoints/<step>/pretrained_model directory, from `lerobot-cpp train` or Python
// LeRobot, or a Hub id such as user/act_so101, fetched into the Hugging Face cache as LeRobot's
// --policy.path=user/act_so101 does), then at every control tick gives it the observation it was
// trained on and sends the action it returns to the robot.
//
// The robot is stood in for here: the camera frames are a moving test pattern and the joint state
// follows the commanded action. On a robot, put the cameras' latest frames (uint8, H x W x 3) and
// the joint positions (float) there, and send the action to the motors.
//
//   robot_loop POLICY [--episodes=N] [--steps=N] [--fps=F] [--device=cpu|cuda] [--revision=REV]
//              [--task=TEXT] [--save_observation=FILE.safetensors]   (keeps the first tick's observation)
//   robot_loop POLICY --observation=FILE.safetensors [--task=TEXT] [--seed=N]  (one observation: its action)
//   robot_loop POLICY --rtc [--refill=K] ...   (real-time chunking, SmolVLA: the next chunk is
//              predicted on another thread from the queue's leftover while this loop executes)
// POLICY: a pretrained_model directory or a Hub id (HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE apply).
// --task: the instruction in words, for a policy that reads it (SmolVLA), as LeRobot's
// dataset task or --single_task. --seed: LibTorch's generator seeded before that one prediction, as
// `lerobot-cpp infer --seed` does (a sampling policy, Diffusion or SmolVLA, then draws the same noise).
#include <lerobot/common/safetensors_torch.h>
#include <lerobot/hub/policy_models.h>
#include <lerobot/hub/pretrained.h>
#include <lerobot/policies/inference.h>
#include <lerobot/policies/rtc_action_queue.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// What the robot reports at one tick, under the policy's input feature names: each camera's
// frame (uint8, H x W x 3, the size the policy was trained on) and the joint state.
std::map<std::string, torch::Tensor> read_robot(const lerobot::PolicyConfig& cfg, int64_t tick,
                                                const torch::Tensor& joints) {
  std::map<std::string, torch::Tensor> observation;
  for (const auto& [key, feature] : cfg.input_features) {
    if (feature.type == "VISUAL") {  // config.json keeps images as (C, H, W)
      const int64_t h = feature.shape[1], w = feature.shape[2];
      auto rows = torch::arange(h, torch::kInt64).view({h, 1, 1});
      auto cols = torch::arange(w, torch::kInt64).view({1, w, 1});
      auto chan = torch::arange(feature.shape[0], torch::kInt64).view({1, 1, -1});
      observation[key] = ((rows * 3 + cols * 5 + chan * 80 + tick * 7) % 256).to(torch::kUInt8);
    } else if (feature.type == "STATE" || feature.type == "ENV") {
      torch::Tensor s = torch::zeros({feature.shape[0]}, torch::kFloat32);
      const int64_t n = std::min<int64_t>(s.numel(), joints.numel());
      if (n > 0) s.slice(0, 0, n).copy_(joints.slice(0, 0, n));
      observation[key] = s;
    }
  }
  return observation;
}

void print_action(const char* label, const torch::Tensor& action) {
  std::printf("%s", label);
  const torch::Tensor a = action.to(torch::kDouble).contiguous();
  for (int64_t i = 0; i < a.numel(); ++i) std::printf(" %.9g", a[i].item<double>());
  std::printf("\n");
}

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]).rfind(prefix, 0) == 0) return std::string(argv[i]).substr(prefix.size());
  return fallback;
}

using Clock = std::chrono::steady_clock;

// One episode with real-time chunking: this thread executes one queued action per tick while an
// inference thread, whenever `refill` or fewer actions are left, predicts the next chunk from the
// latest observation and the queue's leftover; the chunk replaces the queue minus the ticks that
// passed while it was predicted, and the next prediction expects as many (its inference_delay).
void rtc_episode(lerobot::InferencePolicy& policy, int episode, int steps, double fps, int64_t refill) {
  const lerobot::PolicyConfig& cfg = policy.config();
  lerobot::RtcActionQueue queue;
  std::mutex observed;
  torch::Tensor joints = torch::zeros({0});
  std::map<std::string, torch::Tensor> latest = read_robot(cfg, 0, joints);
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<int> chunks{0}, guided{0};
  auto predict_chunks = [&] {
    int64_t expected_delay = 0;
    while (!stop) {
      if (queue.size() > refill) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      std::map<std::string, torch::Tensor> observation;
      {
        std::lock_guard<std::mutex> lock(observed);
        observation = latest;
      }
      const int64_t before = queue.consumed();
      const torch::Tensor left = queue.left_over();
      const torch::Tensor chunk = policy.predict_action_chunk(observation, left, expected_delay);
      expected_delay = queue.consumed() - before;  // the ticks this prediction took
      queue.merge(chunk, expected_delay);
      ++chunks;
      if (left.defined()) ++guided;
    }
  };
  std::exception_ptr failure;  // what stopped the inference thread, rethrown below
  std::thread inference([&] {
    try {
      predict_chunks();
    } catch (...) {
      failure = std::current_exception();
      failed = true;
    }
  });
  int waited = 0;
  auto next_tick = Clock::now();
  for (int t = 0; t < steps; ++t) {
    std::optional<torch::Tensor> action = queue.pop();
    for (; !action && !failed; action = queue.pop()) {  // no chunk yet: the robot holds still this tick
      ++waited;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!action) break;  // the inference thread failed
    const std::string label = "episode " + std::to_string(episode) + " step " + std::to_string(t) + " action:";
    print_action(label.c_str(), *action);  // on a robot: send it to the motors
    joints = *action;
    {
      std::lock_guard<std::mutex> lock(observed);
      latest = read_robot(cfg, t + 1, joints);
    }
    if (fps > 0) {
      next_tick += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps));
      std::this_thread::sleep_until(next_tick);
    }
  }
  stop = true;
  inference.join();
  if (failure) std::rethrow_exception(failure);
  std::printf("real-time chunking: %d chunks, %d of them guided by the previous chunk's leftover; %d waits for a chunk\n",
              chunks.load(), guided.load(), waited);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: robot_loop POLICY [--episodes=N] [--steps=N] [--fps=F] [--device=cpu|cuda]\n"
                         "                  [--revision=REV] [--task=TEXT] [--save_observation=FILE.safetensors]\n"
                         "                  [--rtc [--refill=K]]   (real-time chunking: SmolVLA)\n"
                         "       robot_loop POLICY --observation=FILE.safetensors [--task=TEXT] [--seed=N]\n"
                         "POLICY: a pretrained_model directory or a Hub id (user/name)\n");
    return 2;
  }
  try {
    const torch::Device device(flag(argc, argv, "device", "cpu"));
    // A local directory as it is; a Hub id: its snapshot in $HF_HUB_CACHE, downloaded if needed.
    const lerobot::hub::HubClient hub(lerobot::hub::HubEnv::from_environment());
    const lerobot::fs::path dir = lerobot::hub::resolve_pretrained(hub, argv[1], flag(argc, argv, "revision", "main"));
    // A policy built on another model (SmolVLA's backbone, named by its Hub id in config.json)
    // finds it the same way.
    lerobot::install_hub_model_resolver();
    lerobot::InferencePolicy policy(dir, device);
    policy.set_task(flag(argc, argv, "task", ""));
    const lerobot::PolicyConfig& cfg = policy.config();
    std::printf("policy %s from %s (%s) on %s\n", cfg.type().c_str(), argv[1], dir.c_str(), device.str().c_str());

    const std::string file = flag(argc, argv, "observation", "");
    if (!file.empty()) {  // one recorded observation, e.g. to compare with `lerobot-cpp infer`
      std::map<std::string, torch::Tensor> observation;
      for (auto& [key, tensor] : lerobot::load_safetensors(file)) observation[key] = tensor;
      const std::string seed = flag(argc, argv, "seed", "");
      if (!seed.empty()) torch::manual_seed(std::stoull(seed));
      print_action("action:", policy.select_action(observation));
      return 0;
    }

    const int episodes = std::stoi(flag(argc, argv, "episodes", "1"));
    const int steps = std::stoi(flag(argc, argv, "steps", "20"));
    const double fps = std::stod(flag(argc, argv, "fps", "0"));  // 0: as fast as the policy answers
    const std::string save = flag(argc, argv, "save_observation", "");
    if (flag(argc, argv, "rtc", "") == "true" || std::find(argv + 2, argv + argc, std::string("--rtc")) != argv + argc) {
      policy.ensure_rtc("--rtc");  // the checkpoint's rtc_config, or LeRobot's RTCConfig defaults
      const auto horizon = cfg.action_delta_indices();  // the chunk's steps
      const int64_t half_chunk = horizon ? static_cast<int64_t>(horizon->size()) / 2 : 1;
      const int64_t refill = std::stoll(flag(argc, argv, "refill", std::to_string(half_chunk)));
      for (int e = 0; e < episodes; ++e) rtc_episode(policy, e, steps, fps, refill);
      return 0;
    }
    std::vector<double> latency_ms;
    for (int e = 0; e < episodes; ++e) {
      policy.reset();  // a new episode: forget the queued actions of the last one
      torch::Tensor joints = torch::zeros({0});
      auto next_tick = std::chrono::steady_clock::now();
      for (int t = 0; t < steps; ++t) {
        const std::map<std::string, torch::Tensor> observation = read_robot(cfg, t, joints);
        if (!save.empty() && e == 0 && t == 0) lerobot::save_safetensors(save, observation);
        const auto start = std::chrono::steady_clock::now();
        const torch::Tensor action = policy.select_action(observation);
        latency_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        const std::string label = "episode " + std::to_string(e) + " step " + std::to_string(t) + " action:";
        print_action(label.c_str(), action);  // on a robot: send it to the motors
        joints = action;                      // the stand-in robot reaches the commanded position
        if (fps > 0) {
          next_tick += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(1.0 / fps));
          std::this_thread::sleep_until(next_tick);
        }
      }
    }
    std::sort(latency_ms.begin(), latency_ms.end());
    if (!latency_ms.empty())
      std::printf("%zu actions; latency per action: median %.3f ms, worst %.3f ms\n", latency_ms.size(),
                  latency_ms[latency_ms.size() / 2], latency_ms.back());
    return 0;
  } catch (const std::exception& e) {  // lerobot::Error says what, where and how to fix it
    std::fprintf(stderr, "robot_loop: %s\n", e.what());
    return 1;
  }
}
