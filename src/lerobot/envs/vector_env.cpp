// VectorEnv: batches of simulated envs, optionally stepped on several threads.
#include "lerobot/envs/vector_env.h"

#include <algorithm>
#include <exception>
#include <thread>

#include "lerobot/common/error.h"

namespace lerobot {

StepInfo Env::finish_step(bool success, float reward) {
  ++steps_;
  StepInfo info;
  info.reward = success ? 1.0f : std::min(std::max(reward, 0.0f), 1.0f);
  info.terminated = success;
  info.is_success = success;
  info.truncated = !success && steps_ >= spec().episode_length;
  last_ = info;
  return info;
}

VectorEnv::VectorEnv(std::vector<std::unique_ptr<Env>> envs, int num_threads)
    : envs_(std::move(envs)), num_threads_(std::max(1, num_threads)) {
  if (envs_.empty()) throw_usage("a vector env needs at least one env", "n_envs", "pass n_envs >= 1");
  const EnvSpec& s = spec();
  for (const auto& e : envs_)
    LEROBOT_CHECK(e && e->spec().task == s.task && e->spec().image_size == s.image_size,
                  "all envs of a VectorEnv must be the same task");
  const size_t n = envs_.size();
  images_.assign(n * s.image_size * s.image_size * 3, 0);
  states_.assign(n * s.state_dim, 0.0f);
  env_states_.assign(n * s.env_state_dim, 0.0f);
  rewards_.assign(n, 0.0f);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  is_success_.assign(n, 0);
}

VectorEnv::~VectorEnv() = default;

template <class F>
void VectorEnv::parallel_for(F&& f) {
  const int64_t n = num_envs();
  const int64_t t = std::min<int64_t>(num_threads_, n);
  if (t <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(t);
  for (int64_t k = 0; k < t; ++k) {
    threads.emplace_back([&, k] {
      try {
        for (int64_t i = k; i < n; i += t) f(i);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void VectorEnv::observe(int64_t i) {
  const EnvSpec& s = spec();
  envs_[i]->render(images_.data() + i * s.image_size * s.image_size * 3);
  envs_[i]->get_state(states_.data() + i * s.state_dim);
  if (s.env_state_dim > 0) envs_[i]->get_env_state(env_states_.data() + i * s.env_state_dim);
}

void VectorEnv::reset(const std::vector<uint64_t>& seeds) {
  if (static_cast<int64_t>(seeds.size()) != num_envs())
    throw_usage("got " + std::to_string(seeds.size()) + " seeds for " +
                    std::to_string(num_envs()) + " envs",
                "VectorEnv::reset", "pass one seed per env");
  parallel_for([&](int64_t i) {
    envs_[i]->reset(seeds[i]);
    observe(i);
    rewards_[i] = 0.0f;
    terminated_[i] = truncated_[i] = is_success_[i] = 0;
  });
}

void VectorEnv::step(const float* actions) {
  const int64_t a = spec().action_dim;
  parallel_for([&](int64_t i) {
    const bool was_done = envs_[i]->done();
    StepInfo r = envs_[i]->step(actions + i * a);
    if (!was_done) observe(i);
    rewards_[i] = r.reward;
    terminated_[i] = r.terminated;
    truncated_[i] = r.truncated;
    is_success_[i] = r.is_success;
  });
}

void VectorEnv::step(const std::vector<float>& actions) {
  if (static_cast<int64_t>(actions.size()) != num_envs() * spec().action_dim)
    throw_usage("got " + std::to_string(actions.size()) + " action values, expected " +
                    std::to_string(num_envs() * spec().action_dim),
                "VectorEnv::step", "pass a (num_envs, action_dim) row-major action batch");
  step(actions.data());
}

bool VectorEnv::all_done() const {
  for (const auto& e : envs_)
    if (!e->done()) return false;
  return true;
}

}  // namespace lerobot
