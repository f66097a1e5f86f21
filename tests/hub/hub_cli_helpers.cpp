// CLI-level hub test helpers (see hub_cli_helpers.h).
#include "hub_cli_helpers.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "lerobot/common/safetensors.h"

namespace lerobot::hub::testing {
namespace {

constexpr const char* kHubVariables[] = {"HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_LEROBOT_HOME", "HF_TOKEN",
                                         "HF_HUB_OFFLINE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN_PATH"};

}  // namespace

HubEnvironment::HubEnvironment(const std::string& endpoint, const fs::path& home) {
  for (const char* n : kHubVariables) {
    if (const char* v = std::getenv(n)) saved_.emplace_back(n, v);
    ::unsetenv(n);
  }
  ::setenv("HF_ENDPOINT", endpoint.c_str(), 1);
  ::setenv("HF_HOME", home.c_str(), 1);
}

HubEnvironment::~HubEnvironment() {
  for (const char* n : kHubVariables) ::unsetenv(n);
  for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
}

void write_resnet18_weights(const fs::path& path, unsigned seed) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  auto norm = [&](const std::string& name, int64_t c) {
    for (const char* t : {"weight", "bias", "running_mean", "running_var"}) shapes.push_back({name + "." + t, {c}});
  };
  shapes.push_back({"conv1.weight", {64, 3, 7, 7}});
  norm("bn1", 64);
  int64_t in = 64;
  for (int layer = 1; layer <= 4; ++layer) {
    const int64_t planes = 64 << (layer - 1);
    for (int block = 0; block < 2; ++block) {
      const std::string b = "layer" + std::to_string(layer) + "." + std::to_string(block);
      const int64_t block_in = block == 0 ? in : planes;
      shapes.push_back({b + ".conv1.weight", {planes, block_in, 3, 3}});
      norm(b + ".bn1", planes);
      shapes.push_back({b + ".conv2.weight", {planes, planes, 3, 3}});
      norm(b + ".bn2", planes);
      if (block == 0 && layer > 1) {
        shapes.push_back({b + ".downsample.0.weight", {planes, block_in, 1, 1}});
        norm(b + ".downsample.1", planes);
      }
    }
    in = planes;
  }
  shapes.push_back({"fc.weight", {1000, 512}});
  shapes.push_back({"fc.bias", {1000}});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> weight(-0.05f, 0.05f), var(0.5f, 1.5f);
  std::vector<std::vector<float>> data;
  std::vector<TensorEntry> entries;
  for (const auto& [name, shape] : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    const bool positive = name.size() > 11 && name.compare(name.size() - 11, 11, "running_var") == 0;
    for (auto& x : v) x = positive ? var(rng) : weight(rng);
    data.push_back(std::move(v));
  }
  for (size_t i = 0; i < shapes.size(); ++i)
    entries.push_back({shapes[i].first, DType::kF32, shapes[i].second, data[i].data(), data[i].size() * sizeof(float)});
  write_safetensors(path, entries);
}

int count_requests(const std::vector<std::string>& request_paths, const std::string& part) {
  int n = 0;
  for (const auto& p : request_paths) n += p.find(part) != std::string::npos;
  return n;
}

}  // namespace lerobot::hub::testing
