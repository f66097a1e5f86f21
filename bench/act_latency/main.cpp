// ACT inference latency: one predicted chunk (the network) and the amortized cost per executed
// action (select_action with the n_action_steps queue), default LeRobot ACT config, one 480x640
// camera and a 6-dof state. Also reports the backbone's share of a chunk.
//   bench_act_latency [--iters=N] [--threads=T] [--device=cpu|cuda] [--n_action_steps=K]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/act/modeling_act.h"

using namespace lerobot;

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
std::string arg(int argc, char** argv, const std::string& name, const std::string& def) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--" + name + "=", 0) == 0) return a.substr(name.size() + 3);
  }
  return def;
}
}  // namespace

int main(int argc, char** argv) {
  const int iters = std::stoi(arg(argc, argv, "iters", "10"));
  const int threads = std::stoi(arg(argc, argv, "threads", std::to_string(std::thread::hardware_concurrency())));
  const torch::Device device(arg(argc, argv, "device", "cpu"));
  torch::set_num_threads(threads);

  ACTConfig cfg;  // LeRobot defaults: dim_model 512, ff 3200, 4+1 layers, chunk 100
  cfg.input_features["observation.images.top"] = {"VISUAL", {3, 480, 640}};
  cfg.input_features["observation.state"] = {"STATE", {6}};
  cfg.output_features["action"] = {"ACTION", {6}};
  cfg.pretrained_backbone_weights = std::nullopt;
  cfg.n_action_steps = std::stoi(arg(argc, argv, "n_action_steps", "100"));
  torch::manual_seed(0);
  ACTPolicy policy(cfg);
  policy.to(device);
  policy.eval();
  Batch batch = {{"observation.images.top", torch::rand({1, 3, 480, 640}, device)},
                 {"observation.state", torch::randn({1, 6}, device)}};
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };

  InferenceGuard guard;
  for (int i = 0; i < 2; ++i) policy.predict_action_chunk(batch);  // warm-up
  sync();
  std::vector<double> chunk_ms, backbone_ms;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto a = policy.predict_action_chunk(batch);
    sync();
    chunk_ms.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    auto f = policy.model->backbone->forward(batch.at("observation.images.top"));
    sync();
    backbone_ms.push_back(ms_since(t0));
  }
  // select_action over two full queues: one network call per n_action_steps actions.
  policy.reset();
  const int n_actions = 2 * static_cast<int>(cfg.n_action_steps);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n_actions; ++i) policy.select_action(batch);
  sync();
  const double per_action = ms_since(t0) / n_actions;

  const double chunk = median(chunk_ms), bb = median(backbone_ms);
  std::printf("ACT default config, 1 camera 480x640, state 6, action 6, chunk %lld, n_action_steps %lld\n",
              static_cast<long long>(cfg.chunk_size), static_cast<long long>(cfg.n_action_steps));
  std::printf("device %s, threads %d, torch %d.%d, %d iterations (median)\n", device.str().c_str(), threads,
              TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, iters);
  std::printf("predict_action_chunk: %.1f ms per chunk\n", chunk);
  std::printf("  of which ResNet18 backbone: %.1f ms (%.0f%%)\n", bb, 100.0 * bb / chunk);
  std::printf("select_action: %.2f ms per action (amortized over the queue), ratio chunk/action %.1fx\n",
              per_action, chunk / per_action);
  std::printf("30 Hz budget 33.3 ms: one chunk = %.2f control ticks\n", chunk / (1000.0 / 30.0));
  return 0;
}
