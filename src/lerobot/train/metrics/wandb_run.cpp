// W&B run id, tags and init arguments (see wandb_run.h).
#include "lerobot/train/metrics/wandb_run.h"

#include <cctype>
#include <random>
#include <regex>

#include "lerobot/common/logging.h"
#include "lerobot/train/checkpoint.h"

namespace lerobot {
namespace {

constexpr size_t kMaxTagLength = 64;  // W&B refuses longer tags

std::vector<std::string> group_parts(const TrainPipelineConfig& cfg) {
  auto or_none = [](const std::string& s) { return s.empty() ? std::string("None") : s; };
  std::vector<std::string> parts = {"policy:" + (cfg.policy ? cfg.policy->type() : std::string("None")),
                                    "seed:" + (cfg.seed ? std::to_string(*cfg.seed) : std::string("None")),
                                    "dataset:" + or_none(cfg.dataset.repo_id)};
  if (cfg.env) parts.push_back("env:" + cfg.env->type());
  return parts;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string new_wandb_run_id() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id;
  for (int i = 0; i < 8; ++i) id += kChars[pick(rd)];
  return id;
}

std::vector<std::string> wandb_tags(const TrainPipelineConfig& cfg) {
  std::vector<std::string> tags = group_parts(cfg);
  for (auto& t : tags)
    if (t.size() > kMaxTagLength) t.resize(kMaxTagLength);
  return tags;
}

std::string wandb_group(const TrainPipelineConfig& cfg) {
  std::string g;
  for (const auto& p : group_parts(cfg)) g += (g.empty() ? "" : "-") + p;
  return g;
}

std::string wandb_mode(const WandBConfig& cfg) {
  const std::string m = cfg.mode.value_or("");
  return m == "online" || m == "offline" || m == "disabled" ? m : "online";
}

std::string wandb_run_id_from_filesystem(const fs::path& output_dir) {
  static const std::regex kRunFile("run-([^.]+)\\.wandb");
  std::error_code ec;
  std::string found;
  int n = 0;
  for (const auto& e : fs::directory_iterator(output_dir / "wandb" / "latest-run", ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, kRunFile)) {
      found = m[1].str();
      ++n;
    }
  }
  return n == 1 ? found : std::string();
}

std::string assign_wandb_run_id(TrainPipelineConfig& cfg, const fs::path& output_dir) {
  if (cfg.wandb.run_id && !cfg.wandb.run_id->empty()) return cfg.resume ? "must" : "";
  if (cfg.resume) {
    const std::string id = wandb_run_id_from_filesystem(output_dir);
    if (!id.empty()) {
      cfg.wandb.run_id = id;
      return "must";
    }
    LOG_WARNING << "--resume=true but the checkpoint's config has no wandb.run_id and " << (output_dir / "wandb/latest-run").string()
                << " holds no run: starting a new W&B run (pass --wandb.run_id=<id> to continue an earlier one)";
  }
  cfg.wandb.run_id = new_wandb_run_id();
  return "";
}

Json wandb_sidecar_spec(TrainPipelineConfig& cfg, const std::string& resume, const fs::path& output_dir,
                        const fs::path& jsonl) {
  auto opt = [](const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); };
  Json init = Json::object();
  init["id"] = cfg.wandb.run_id.value_or("");
  init["project"] = cfg.wandb.project;
  init["entity"] = opt(cfg.wandb.entity);
  init["name"] = opt(cfg.job_name);
  init["notes"] = opt(cfg.wandb.notes);
  init["tags"] = cfg.wandb.add_tags ? Json(wandb_tags(cfg)) : Json(nullptr);
  init["dir"] = fs::absolute(output_dir).string();
  init["config"] = to_json(cfg);
  init["save_code"] = false;
  init["job_type"] = "train_eval";
  init["resume"] = resume.empty() ? Json(nullptr) : Json(resume);
  init["mode"] = wandb_mode(cfg.wandb);

  Json existing = Json::array();
  std::error_code ec;
  const fs::path checkpoints = fs::absolute(output_dir / kCheckpointsDir);
  for (const auto& e : fs::directory_iterator(checkpoints, ec))
    if (all_digits(e.path().filename().string())) existing.push_back(e.path().filename().string());

  Json spec = Json::object();
  spec["init"] = init;
  spec["jsonl"] = fs::absolute(jsonl).string();
  spec["jsonl_offset"] = fs::exists(jsonl) ? static_cast<int64_t>(fs::file_size(jsonl)) : 0;
  spec["checkpoints_dir"] = checkpoints.string();
  spec["existing_checkpoints"] = existing;
  spec["disable_artifact"] = cfg.wandb.disable_artifact;
  spec["artifact_group"] = wandb_group(cfg);
  spec["env_fps"] = cfg.env ? Json(cfg.env->fps) : Json(nullptr);
  return spec;
}

}  // namespace lerobot
