// evaluate(): batches of rollouts -> per-episode metrics, aggregates, videos, eval_info.json.
#include "lerobot/eval/evaluate.h"

#include <algorithm>
#include <chrono>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/eval/rollout.h"
#include "lerobot/io/video/video_encoder.h"

namespace lerobot {

std::unique_ptr<VideoEncoder> open_rollout_video(const fs::path& path, int64_t width, int64_t height, int64_t fps) {
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path());
  EncoderOptions opts;
  opts.codec = "libx264";
  opts.pix_fmt = "yuv420p";
  opts.g = static_cast<int>(std::max<int64_t>(1, 2 * fps));
  opts.crf = 23;
  const int w = static_cast<int>(width), h = static_cast<int>(height), f = static_cast<int>(fps);
  try {
    return std::make_unique<VideoEncoder>(path.string(), w, h, f, opts);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    LOG_WARNING << "libx264 unavailable (" << e.problem() << "); writing " << path.string() << " with libsvtav1";
    return std::make_unique<VideoEncoder>(path.string(), w, h, f, EncoderOptions{});
  }
}

EvalResult evaluate(ActionSource& source, const EnvConfig& env_cfg, const EvalOptions& o) {
  if (o.n_episodes < 1) throw_usage("n_episodes must be >= 1, got " + std::to_string(o.n_episodes), "eval.n_episodes");
  if (o.batch_size < 1) throw_usage("batch_size must be >= 1, got " + std::to_string(o.batch_size), "eval.batch_size");
  if (o.max_videos > 0 && o.videos_dir.empty())
    throw_usage("rollout videos need a videos directory", "videos_dir");
  const auto start = std::chrono::steady_clock::now();
  auto env = make_env(env_cfg, o.batch_size, std::max(1, o.num_threads));
  const EnvSpec& spec = env->spec();
  const int64_t n_batches = (o.n_episodes + o.batch_size - 1) / o.batch_size;

  EvalResult r;
  r.task = env_cfg.type();
  r.blank_images = o.blank_images;
  int rendered = 0;
  ProgressBar progress(o.n_episodes, 0, o.progress, "eval", "episodes");
  for (int64_t b = 0; b < n_batches; ++b) {
    std::vector<uint64_t> seeds;
    for (int64_t i = 0; i < o.batch_size; ++i) seeds.push_back(static_cast<uint64_t>(o.start_seed + b * o.batch_size + i));
    RolloutOptions ro;
    ro.max_steps = o.max_steps;
    ro.blank_images = o.blank_images;
    // Videos of the first episodes, written as they are played (not those of discarded episodes).
    ro.render_envs = std::min<int64_t>({o.max_videos - rendered, o.batch_size, o.n_episodes - b * o.batch_size});
    std::vector<std::unique_ptr<VideoEncoder>> videos(static_cast<size_t>(std::max<int64_t>(0, ro.render_envs)));
    ro.on_frame = [&](int64_t i, const uint8_t* rgb) {
      auto& video = videos[static_cast<size_t>(i)];
      if (!video)
        video = open_rollout_video(o.videos_dir / ("eval_episode_" + std::to_string(rendered + i) + ".mp4"),
                                   spec.video_w(), spec.video_h(), spec.fps);
      video->add_frame(rgb, PixelLayout::kHWC);
    };
    RolloutResult roll = rollout(*env, source, seeds, ro);
    for (auto& video : videos) {
      if (!video) continue;
      video->finish();
      r.video_paths.push_back(video->path());
      ++rendered;
    }

    const int64_t n_steps = roll.done.size(1);
    // argmax over a bool row returns the first true (done is forced true at the last step).
    const torch::Tensor done_idx = roll.done.to(torch::kInt64).argmax(1);
    const torch::Tensor mask = torch::arange(n_steps).unsqueeze(0).le(done_idx.unsqueeze(1) + 1);
    const torch::Tensor masked = roll.reward * mask.to(torch::kFloat32);
    const torch::Tensor sums = masked.sum(1).to(torch::kFloat64), maxs = std::get<0>(masked.max(1)).to(torch::kFloat64);
    const torch::Tensor succ = roll.success.logical_and(mask).any(1);
    for (int64_t i = 0; i < o.batch_size; ++i) {
      const int64_t ep = b * o.batch_size + i;
      if (ep >= o.n_episodes) break;  // extra episodes of the last batch are discarded
      EpisodeMetrics m;
      m.episode_ix = ep;
      m.sum_reward = sums[i].item<double>();
      m.max_reward = maxs[i].item<double>();
      m.success = succ[i].item<bool>();
      m.seed = static_cast<int64_t>(seeds[i]);
      r.per_episode.push_back(m);
    }
    progress.update(static_cast<int64_t>(r.per_episode.size()));
    LOG_DEBUG << "eval batch " << b + 1 << "/" << n_batches << " done";
  }
  progress.finish();

  r.n_episodes = static_cast<int64_t>(r.per_episode.size());
  double s = 0, mx = 0, ok = 0;
  for (const auto& m : r.per_episode) {
    s += m.sum_reward;
    mx += m.max_reward;
    ok += m.success ? 1.0 : 0.0;
  }
  r.avg_sum_reward = s / r.n_episodes;
  r.avg_max_reward = mx / r.n_episodes;
  r.pc_success = ok / r.n_episodes * 100.0;
  r.eval_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.eval_ep_s = r.eval_s / r.n_episodes;
  return r;
}

EvalResult evaluate_policy(Policy& policy, const PolicyProcessors& processors, const EnvConfig& env_cfg,
                           int64_t n_episodes, int64_t batch_size, int64_t start_seed, const fs::path& videos_dir,
                           int max_videos, bool blank_images, bool cuda_graphs, bool async_envs) {
  PolicyActionSource source(policy, processors, cuda_graphs);
  EvalOptions o;
  o.n_episodes = n_episodes;
  o.batch_size = batch_size;
  o.start_seed = start_seed;
  o.videos_dir = videos_dir;
  o.max_videos = videos_dir.empty() ? 0 : max_videos;
  o.blank_images = blank_images;
  o.num_threads = async_envs ? static_cast<int>(std::min<int64_t>(batch_size, 4)) : 1;
  return evaluate(source, env_cfg, o);
}

Json EvalResult::to_json() const {
  Json episodes = Json::array();
  Json sums = Json::array(), maxs = Json::array(), succ = Json::array();
  for (const auto& m : per_episode) {
    episodes.push_back({{"episode_ix", m.episode_ix},
                        {"sum_reward", m.sum_reward},
                        {"max_reward", m.max_reward},
                        {"success", m.success},
                        {"seed", m.seed}});
    sums.push_back(m.sum_reward);
    maxs.push_back(m.max_reward);
    succ.push_back(m.success);
  }
  Json metrics = {{"sum_rewards", sums},
                  {"max_rewards", maxs},
                  {"successes", succ},
                  {"video_paths", video_paths},
                  {"predicted_video_paths", Json::array()}};
  Json group = {{"avg_sum_reward", avg_sum_reward},
                {"avg_max_reward", avg_max_reward},
                {"pc_success", pc_success},
                {"n_episodes", n_episodes},
                {"video_paths", video_paths},
                {"predicted_video_paths", Json::array()}};
  Json overall = {{"avg_sum_reward", avg_sum_reward},
                  {"avg_max_reward", avg_max_reward},
                  {"pc_success", pc_success},
                  {"n_episodes", n_episodes},
                  {"eval_s", eval_s},
                  {"eval_ep_s", eval_ep_s},
                  {"video_paths", video_paths},
                  {"predicted_video_paths", Json::array()}};
  Json j = Json::object();
  j["per_task"] = Json::array({Json{{"task_group", task}, {"task_id", 0}, {"metrics", metrics}}});
  j["per_group"] = Json{{task, group}};
  j["overall"] = overall;
  j["per_episode"] = episodes;
  if (blank_images) j["lerobot_cpp"] = Json{{"blank_images", true}};
  return j;
}

}  // namespace lerobot
