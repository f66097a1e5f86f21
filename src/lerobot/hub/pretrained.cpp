// A model repo's pretrained_model files into the standard cache (huggingface_hub's snapshot).
#include "lerobot/hub/pretrained.h"

#include <algorithm>
#include <cctype>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {

bool looks_like_repo_id(const std::string& s) {
  auto parts = split(s, '/');
  if (parts.size() != 2) return false;
  for (const auto& p : parts) {
    if (p.empty() || p.size() > 96 || p[0] == '.' || p[0] == '-' || p.find("..") != std::string::npos) return false;
    for (unsigned char c : p)
      if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

std::string repo_id_problem(const std::string& id) {
  if (id.empty()) return "it is empty";
  if (id.size() > 96) return "it is longer than 96 characters";
  const auto parts = split(id, '/');
  if (parts.size() > 2) return "it has more than one '/' (the form is namespace/name)";
  for (const auto& p : parts) {
    if (p.empty()) return "a part around '/' is empty (the form is namespace/name)";
    for (unsigned char c : p)
      if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.'))
        return std::string("it has the character '") + char(c) + "' (allowed: letters, digits, '-', '_', '.')";
    auto word = [](unsigned char c) { return std::isalnum(c) || c == '_'; };
    if (!word(p.front()) || !word(p.back())) return "a part starts or ends with '-' or '.'";
  }
  if (id.find("--") != std::string::npos || id.find("..") != std::string::npos) return "it contains '--' or '..'";
  if (ends_with(id, ".git")) return "it ends with '.git'";
  return "";
}

fs::path resolve_pretrained(const HubClient& client, const std::string& value, const std::string& revision) {
  std::error_code ec;
  if (fs::exists(value, ec) || !looks_like_repo_id(value)) return value;
  // The files from_pretrained and make_pre_post_processors read: the top-level JSON and safetensors.
  Snapshot snap = client.snapshot(client.env().hub_cache, RepoType::kModel, value, revision, [](const std::string& f) {
    return f.find('/') == std::string::npos && (ends_with(f, ".json") || ends_with(f, ".safetensors"));
  });
  const bool has_config = std::find(snap.files.begin(), snap.files.end(), "config.json") != snap.files.end();
  const bool has_checkpoints = std::any_of(snap.files.begin(), snap.files.end(),
                                           [](const std::string& f) { return starts_with(f, "checkpoints/"); });
  if (!has_config && has_checkpoints)  // a training repo (--save_checkpoint_to_hub), not a published policy
    throw_usage("the Hub repo " + value + " (revision " + revision +
                    ") has no config.json at its top: it holds a run's checkpoints (checkpoints/<step>/, as "
                    "--save_checkpoint_to_hub pushes them), not a published policy",
                "--policy.path",
                "resume that run with --resume=true --config_path=" + value +
                    ", or download checkpoints/<step>/pretrained_model and pass its directory to --policy.path");
  LOG_INFO << "policy " << value << " (Hub, commit " << snap.commit.substr(0, 10) << "): " << snap.dir.string();
  return snap.dir;
}

}  // namespace lerobot::hub
