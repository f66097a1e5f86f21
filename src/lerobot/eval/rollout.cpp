// rollout(): the step loop of LeRobot's evaluation, over the built-in VectorEnv.
#include "lerobot/eval/rollout.h"

#include "lerobot/common/error.h"
#include "lerobot/eval/record.h"

namespace lerobot {

Batch observation_batch(const VectorEnv& env, bool blank_images) {
  const EnvSpec& spec = env.spec();
  const int64_t n = env.num_envs(), s = spec.image_size;
  Batch batch;
  if (spec.image_observed && blank_images) {
    batch[spec.image_key] = torch::zeros({n, 3, s, s}, torch::kFloat32);
  } else if (spec.image_observed) {
    auto hwc = torch::from_blob(const_cast<uint8_t*>(env.images().data()), {n, s, s, 3}, torch::kUInt8);
    batch[spec.image_key] = hwc.permute({0, 3, 1, 2}).to(torch::kFloat32).div_(255.0f).contiguous();
  }
  batch[spec.state_key] =
      torch::from_blob(const_cast<float*>(env.states().data()), {n, spec.state_dim}, torch::kFloat32).clone();
  if (spec.env_state_dim > 0)
    batch[spec.env_state_key] =
        torch::from_blob(const_cast<float*>(env.env_states().data()), {n, spec.env_state_dim}, torch::kFloat32).clone();
  return batch;
}

RolloutResult rollout(VectorEnv& env, ActionSource& source, const std::vector<uint64_t>& seeds,
                      const RolloutOptions& options) {
  const int64_t n = env.num_envs();
  const EnvSpec& spec = env.spec();
  if (static_cast<int64_t>(seeds.size()) != n)
    throw_usage("rollout needs one seed per env (" + std::to_string(n) + "), got " + std::to_string(seeds.size()),
                "rollout");
  const int64_t max_steps = options.max_steps > 0 ? options.max_steps : spec.episode_length;
  const int64_t render_envs = options.on_frame ? std::min(options.render_envs, n) : 0;
  std::vector<uint8_t> frame(render_envs > 0 ? static_cast<size_t>(spec.video_w() * spec.video_h() * 3) : 0);
  // Video frames of the envs whose episode had not ended before the last step.
  auto send_frames = [&](const std::vector<uint8_t>& ended_before) {
    for (int64_t i = 0; i < render_envs; ++i) {
      if (ended_before[i]) continue;
      env.env(i).render_video(frame.data());
      options.on_frame(i, frame.data());
    }
  };

  env.reset(seeds);
  source.reset(n);
  RolloutResult out;
  std::vector<torch::Tensor> actions, rewards, successes, dones;
  std::vector<uint8_t> done(n, 0);
  send_frames(done);
  std::vector<float> step_actions(n * spec.action_dim);
  const std::vector<std::string> tasks(n, rollout_task_text(spec.task));
  for (int64_t step = 0; step < max_steps; ++step) {
    RolloutObservation obs{observation_batch(env, options.blank_images), &env, tasks};
    torch::Tensor a = source.act(obs).detach().to(torch::kCPU, torch::kFloat32).contiguous();
    if (a.dim() != 2 || a.size(0) != n || a.size(1) != spec.action_dim)
      throw_runtime("the action source returned shape " + c10::str(a.sizes()) + ", expected (" + std::to_string(n) +
                        ", " + std::to_string(spec.action_dim) + ")",
                    "rollout", "the policy's action dimension must match the task's");
    std::copy(a.data_ptr<float>(), a.data_ptr<float>() + a.numel(), step_actions.begin());
    env.step(step_actions);
    send_frames(done);

    for (int64_t i = 0; i < n; ++i) done[i] = done[i] | env.terminated()[i] | env.truncated()[i];
    if (step + 1 == max_steps) std::fill(done.begin(), done.end(), 1);
    actions.push_back(a);
    rewards.push_back(torch::tensor(env.rewards(), torch::kFloat32));
    successes.push_back(torch::from_blob(const_cast<uint8_t*>(env.is_success().data()), {n}, torch::kUInt8)
                            .to(torch::kBool));
    dones.push_back(torch::from_blob(done.data(), {n}, torch::kUInt8).to(torch::kBool));
    bool all = true;
    for (uint8_t d : done) all = all && d;
    if (all) break;
  }
  out.action = torch::stack(actions, 1);
  out.reward = torch::stack(rewards, 1);
  out.success = torch::stack(successes, 1);
  out.done = torch::stack(dones, 1);
  return out;
}

}  // namespace lerobot
