// `lerobot-cpp dataset generate --env.type=reach2d|push2d --num_episodes=N --output_dir=DIR [--dataset.video=false]`.
#include "dataset_generate.h"

#include <iostream>
#include <optional>

#include "lerobot/common/config/flags.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/eval/record.h"

namespace lerobot::app {
namespace {

// LeRobot's record flag: --dataset.video=false stores the camera as an image feature (PNGs).
struct GenerateDatasetFlags : Config {
  bool video = true;
  void visit(FieldVisitor& v) override {
    field(v, "video", video, "Store the camera as an AV1 video (false: an image feature, PNG bytes in the data parquet)");
  }
};

struct GenerateConfig : Config {
  ChoicePtr<EnvConfig> env;
  GenerateDatasetFlags dataset;
  int64_t num_episodes = 50;
  std::optional<std::string> output_dir;
  int64_t seed = 0;
  void visit(FieldVisitor& v) override {
    field(v, "env", env, "Task whose scripted expert is recorded (reach2d, push2d)");
    field(v, "num_episodes", num_episodes, "Successful episodes to record (failed expert runs are re-rolled)");
    field(v, "output_dir", output_dir, "Dataset directory to create (must not exist or be empty)");
    field(v, "seed", seed, "Env seed of the first episode; each further attempt uses the next seed");
    field(v, "dataset", dataset, "How the dataset is stored");
  }
  void validate() const override {
    if (num_episodes < 1) throw_usage("num_episodes must be >= 1", "--num_episodes");
    if (seed < 0) throw_usage("seed must be >= 0", "--seed");
  }
};

const char* kGenerateUsage = R"(usage: lerobot-cpp dataset generate --env.type=reach2d|push2d --num_episodes=N --output_dir=DIR [--seed=0] [--env.image_size=96] [--dataset.video=true]

Records the built-in task's scripted expert as a LeRobot v3.0 dataset: observation.image (AV1
video; with --dataset.video=false an image feature, PNG bytes in the data parquet, as LeRobot's
record writes without video), observation.state (agent x, y), action (target x, y), one task string; only successful
episodes, each up to and including its success step. The result is validated at the end.

flags:
)";

}  // namespace

int dataset_generate_main(const Args& args) {
  register_env_configs();
  GenerateConfig cfg;
  if (wants_help(args)) {
    std::cout << kGenerateUsage;
    print_help(cfg, std::cout);
    return 0;
  }
  apply_flags(cfg, parse_flag_words(args));
  if (!cfg.env) throw_usage("no task given", "--env.type", "pass --env.type=reach2d or --env.type=push2d");
  if (!cfg.output_dir) throw_usage("no output directory given", "--output_dir", "pass --output_dir=DIR");
  const fs::path out = *cfg.output_dir;
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
    throw_usage("the output directory already exists and is not empty", out.string(),
                "choose a new --output_dir or remove the old one");

  RecordOptions ro;
  ro.seed = cfg.seed;
  ro.video = cfg.dataset.video;
  const RecordResult r = record_expert_dataset(*cfg.env, cfg.num_episodes, out, ro);
  std::cout << "recorded " << r.num_episodes << " episodes, " << r.num_frames << " frames ("
            << r.failed_seeds.size() << " failed expert attempts re-rolled) into " << out.string() << "\n";
  const ValidationReport report = validate_dataset(out);
  for (const auto& n : report.notes) std::cout << "note: " << n << "\n";
  if (!report.ok()) {
    for (const auto& p : report.problems) std::cout << "violation: " << p << "\n";
    std::cout << report.problems.size() << " violation(s)\n";
    return static_cast<int>(ErrorKind::kData);
  }
  std::cout << "OK\n";
  return 0;
}

}  // namespace lerobot::app
