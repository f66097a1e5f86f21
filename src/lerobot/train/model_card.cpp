// The README.md model card of a published policy. The YAML metadata block has the keys, values
// and order LeRobot's generate_model_card gives huggingface_hub's ModelCardData (base_model and
// datasets only when known, library_name lerobot, license default apache-2.0, model_name the
// policy type, pipeline_tag robotics, tags {robotics, lerobot, <type>} plus --policy.tags);
// the text below it is our own short description of the run.
#include <cctype>
#include <set>
#include <sstream>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/train/hub_publish.h"

namespace lerobot {
namespace {

// A YAML scalar: plain when safe, else double-quoted (JSON quoting is valid YAML).
std::string yaml_scalar(const std::string& s) {
  bool plain = !s.empty();
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/')) plain = false;
  if (plain && (s == "true" || s == "false" || s == "null" || s == "yes" || s == "no" || s == "on" || s == "off" ||
                s.find_first_not_of("0123456789.-") == std::string::npos || s[0] == '-' || s[0] == '.'))
    plain = false;
  return plain ? s : Json(s).dump();
}

// LeRobot's _BASE_MODEL_MAPPING: the base checkpoint a policy type is fine-tuned from.
std::string base_model_of(const std::string& type) {
  if (type == "smolvla") return "lerobot/smolvla_base";
  if (type == "pi0") return "lerobot/pi0_base";
  if (type == "pi05") return "lerobot/pi05_base";
  if (type == "pi0_fast") return "lerobot/pi0fast-base";
  if (type == "xvla") return "lerobot/xvla-base";
  return "";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string make_model_card(const TrainPipelineConfig& cfg, const DatasetMetadata* meta, const std::string& repo_id) {
  const PolicyConfig& p = *cfg.policy;
  const std::string type = p.type();
  std::string card_license = "apache-2.0";
  if (p.license && !p.license->empty()) card_license = *p.license;
  std::set<std::string> tags = {"robotics", "lerobot", type};
  if (p.tags)
    for (const auto& t : *p.tags) tags.insert(t);
  const std::string base = base_model_of(type);

  std::ostringstream o;
  o << "---\n";
  if (!base.empty()) o << "base_model: " << yaml_scalar(base) << "\n";
  if (!cfg.dataset.repo_id.empty()) o << "datasets: " << yaml_scalar(cfg.dataset.repo_id) << "\n";
  o << "library_name: lerobot\n";
  o << "license: " << yaml_scalar(card_license) << "\n";
  o << "model_name: " << yaml_scalar(type) << "\n";
  o << "pipeline_tag: robotics\n";
  o << "tags:\n";
  for (const auto& t : tags) o << "- " << yaml_scalar(t) << "\n";
  o << "---\n\n";

  o << "# Model Card for " << type << "\n\n";
  o << "A **" << type << "** policy trained with lerobot.cpp, a C++ implementation of LeRobot's training "
    << "stack. The files are those LeRobot reads (`config.json`, `model.safetensors`, the processor files, "
    << "`train_config.json`), so LeRobot loads this repository as one of its own "
    << "(`--policy.path=" << repo_id << "`).\n\n";
  o << "## Model Details\n\n";
  o << "- **License:** " << card_license << "\n";
  if (!base.empty()) o << "- **Fine-tuned from:** " << base << "\n";
  if (meta && meta->info.contains("robot_type") && meta->info["robot_type"].is_string())
    o << "- **Robot type:** `" << meta->info["robot_type"].get<std::string>() << "`\n";
  if (meta) {
    const auto cams = meta->camera_keys();
    if (!cams.empty()) {
      o << "- **Cameras:** ";
      for (size_t i = 0; i < cams.size(); ++i) o << (i ? ", " : "") << "`" << cams[i].substr(cams[i].rfind('.') + 1) << "`";
      o << "\n";
    }
  }
  o << "\n## Training\n\n";
  o << "- **Steps:** " << cfg.steps << "\n- **Batch size (per process):** " << cfg.batch_size << "\n";
  if (cfg.seed) o << "- **Seed:** " << *cfg.seed << "\n";
  if (cfg.optimizer) o << "- **Optimizer:** " << cfg.optimizer->type() << ", lr " << cfg.optimizer->lr << "\n";
  if (!cfg.dataset.repo_id.empty() || meta) {
    o << "\n## Dataset\n\n";
    if (!cfg.dataset.repo_id.empty()) o << "- **Dataset:** " << cfg.dataset.repo_id << "\n";
    if (meta) {
      o << "- **Episodes:** " << meta->total_episodes << ", **frames:** " << meta->total_frames << ", **fps:** "
        << meta->fps << "\n";
      if (!meta->tasks.empty()) {
        o << "- **Tasks:**";
        for (const auto& t : meta->tasks) o << " `" << t << "`";
        o << "\n";
      }
    }
  }
  if (!p.input_features.empty() || !p.output_features.empty()) {
    o << "\n## Features\n\n| key | type | shape |\n| --- | --- | --- |\n";
    for (const auto& k : p.ordered_input_keys())
      o << "| `" << k << "` (input) | " << p.input_features.at(k).type << " | " << shape_text(p.input_features.at(k).shape)
        << " |\n";
    for (const auto& [k, f] : p.output_features)
      o << "| `" << k << "` (output) | " << f.type << " | " << shape_text(f.shape) << " |\n";
  }
  return o.str();
}

}  // namespace lerobot
