// Publishing a trained policy to the Hub (see hub_publish.h); the model card is model_card.cpp.
#include "lerobot/train/hub_publish.h"

#include <unistd.h>

#include <algorithm>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"
#include "lerobot/hub/pretrained.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/train_checkpoint.h"
#include "lerobot/train/train_setup.h"

namespace lerobot {
namespace {

// LeRobot's allow_patterns / ignore_patterns for the published bundle.
bool publishable(const std::string& name) {
  if (ends_with(name, ".tmp") || ends_with(name, ".log") || name == "README.md") return false;
  return ends_with(name, ".json") || ends_with(name, ".safetensors") || ends_with(name, ".yaml") ||
         ends_with(name, ".md");
}

}  // namespace

namespace {

// The flag that makes the run write to the Hub, for messages.
std::string hub_write_flag(const TrainPipelineConfig& cfg) {
  return cfg.policy && cfg.policy->push_to_hub ? "--policy.push_to_hub=true" : "--save_checkpoint_to_hub=true";
}

std::string hub_write_off(const TrainPipelineConfig& cfg) {
  std::string off;
  if (cfg.policy && cfg.policy->push_to_hub) off = "--policy.push_to_hub=false";
  if (cfg.save_checkpoint_to_hub) off += std::string(off.empty() ? "" : " and ") + "--save_checkpoint_to_hub=false";
  return off;
}

}  // namespace

bool writes_to_hub(const TrainPipelineConfig& cfg) {
  return (cfg.policy && cfg.policy->push_to_hub) || cfg.save_checkpoint_to_hub;
}

void check_publish_flags(const TrainPipelineConfig& cfg) {
  if (!writes_to_hub(cfg)) return;
  const std::string flag = hub_write_flag(cfg);
  const std::optional<std::string> id = cfg.policy ? cfg.policy->repo_id : std::nullopt;
  if (!id || id->empty())
    throw_usage(flag + " needs the repo to " +
                    (cfg.policy && cfg.policy->push_to_hub ? "publish to" : "push the checkpoints to") +
                    ", and --policy.repo_id is not set",
                "--policy.repo_id",
                "pass --policy.repo_id=<your user or org>/<model name>, or " + hub_write_off(cfg) +
                    " to keep the run local" +
                    (cfg.policy && cfg.policy->push_to_hub ? " (LeRobot's default is true; lerobot.cpp's is false)" : ""));
  const std::string problem = hub::repo_id_problem(*id);
  if (!problem.empty())
    throw_usage("--policy.repo_id='" + *id + "' is not a Hub repo id: " + problem, "--policy.repo_id",
                "pass --policy.repo_id=<namespace>/<name> with letters, digits, '-', '_' and '.' (at most 96 characters)");
}

void preflight_publish(TrainPipelineConfig& cfg, const hub::HubClient& client) {
  if (!writes_to_hub(cfg)) return;
  check_publish_flags(cfg);
  const std::string flag = hub_write_flag(cfg), off = hub_write_off(cfg);
  const hub::HubEnv& env = client.env();
  if (env.offline)
    throw_usage(flag + " but HF_HUB_OFFLINE is set: nothing could be uploaded", "HF_HUB_OFFLINE",
                "unset HF_HUB_OFFLINE, or pass " + off);
  if (env.token.empty())
    throw_usage("uploading to --policy.repo_id needs a Hugging Face token with write access, and none was found "
                "(HF_TOKEN is not set and " + env.token_path.string() + " does not exist)",
                "HF_TOKEN",
                "run `hf auth login` (it writes " + env.token_path.string() + ") or set HF_TOKEN to a write token from " +
                    env.endpoint + "/settings/tokens; or pass " + off);
  const hub::WhoAmI who = client.whoami();
  if (who.token_role == "read")
    throw_usage("the Hugging Face token of '" + who.name + "' is read-only: it cannot upload to --policy.repo_id=" +
                    *cfg.policy->repo_id,
                "HF_TOKEN", "create a token with write access at " + env.endpoint + "/settings/tokens");
  std::string& id = *cfg.policy->repo_id;
  if (id.find('/') == std::string::npos) {
    id = who.name + "/" + id;  // create_repo puts a bare name in the user's namespace
    LOG_INFO << "--policy.repo_id has no namespace: uploading to " << id;
  }
  const std::string ns = id.substr(0, id.find('/'));
  if (ns != who.name) {
    auto org = std::find_if(who.orgs.begin(), who.orgs.end(), [&](const hub::WhoAmI::Org& o) { return o.name == ns; });
    if (org == who.orgs.end())
      throw_usage("--policy.repo_id=" + id + ": the token belongs to '" + who.name + "', who is not a member of '" + ns +
                      "', so the Hub would refuse the upload",
                  "--policy.repo_id", "pass --policy.repo_id=" + who.name + "/" + id.substr(ns.size() + 1) +
                                          " (your namespace) or a token of a member of '" + ns + "'");
    if (org->role == "read")
      throw_usage("--policy.repo_id=" + id + ": '" + who.name + "' has only read access in '" + ns + "'",
                  "--policy.repo_id", "ask an admin of '" + ns + "' for write access, or upload to " + who.name + "/...");
  }
  const std::string url = client.repo_url(hub::RepoType::kModel, id);
  if (cfg.save_checkpoint_to_hub)
    LOG_INFO << "Will push every checkpoint to " << url << " (checkpoints/<step>/, tagged <step>) as '" << who.name
             << "' (token checked)";
  if (cfg.policy->push_to_hub)
    LOG_INFO << "Will publish the trained policy to " << url << " as '" << who.name << "' (token checked)";
}

hub::CommitResult publish_pretrained_model(const TrainPipelineConfig& cfg, const DatasetMetadata* meta,
                                           const fs::path& pretrained_dir, const std::string& repo_id,
                                           const hub::HubClient& client) {
  std::vector<hub::UploadFile> files;
  for (const auto& e : fs::directory_iterator(pretrained_dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && publishable(name)) files.push_back({name, e.path()});
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path_in_repo < b.path_in_repo; });
  // The card goes to the temp folder, not into the checkpoint (whose contents are fixed).
  const fs::path card = fs::temp_directory_path() / ("lerobot_cpp_model_card_" + std::to_string(::getpid()) + ".md");
  write_file_atomic(card, make_model_card(cfg, meta, repo_id));
  files.push_back({"README.md", card});
  const std::string url = client.create_repo(hub::RepoType::kModel, repo_id, cfg.policy->private_, true);
  hub::CommitResult r;
  try {
    r = client.upload_files(hub::RepoType::kModel, repo_id, files, "Upload policy, processors, model card and train config");
  } catch (...) {
    std::error_code ec;
    fs::remove(card, ec);
    throw;
  }
  std::error_code ec;
  fs::remove(card, ec);
  // LeRobot's wording (HF Jobs watch for this line).
  LOG_INFO << "Model pushed to " << url;
  return r;
}

void publish_trained_policy(TrainSetup& s) {
  const hub::HubClient client(hub::HubEnv::from_environment());
  const std::string repo_id = s.cfg.policy->repo_id.value_or("");
  const DatasetMetadata* meta = s.dataset ? &s.dataset->meta() : nullptr;
  const fs::path last = s.output_dir / kCheckpointsDir / kLastCheckpoint;
  fs::path dir = last / kPretrainedModelDir, ema_dir = last / "pretrained_model_ema";
  if (!s.cfg.save_checkpoint || !fs::exists(dir / "config.json")) {
    // No checkpoint at the end: the same files, written for the upload only.
    const fs::path staging = s.output_dir / "hub_upload";
    dir = staging / kPretrainedModelDir;
    ema_dir = staging / "pretrained_model_ema";
    write_pretrained_model(s, dir);
    if (s.ema) write_pretrained_model(s, ema_dir, true);
  }
  if (s.peft) {
    // LeRobot's publish_trained_model(peft_model=...): no full weights, the adapter folder
    // (adapter_config.json + adapter_model.safetensors) and the policy's config.json (use_peft)
    // with the processors, train config and card; loading it needs the base it names.
    const std::string base = load_json_or_yaml(dir / "adapter_config.json").value("base_model_name_or_path", "");
    LOG_INFO << "Publishing the LoRA adapters (PEFT files, no model.safetensors) on base '" << base << "'";
    if (!hub::looks_like_repo_id(base))
      LOG_WARNING << "the published adapter_config.json names a local base_model_name_or_path '" << base
                  << "': loading " << repo_id << " elsewhere needs that folder; fine-tune from a Hub id "
                  << "(--policy.path=<org>/<base>) to publish an adapter anyone can load";
  }
  LOG_INFO << "Publishing " << dir.string() << " to " << client.repo_url(hub::RepoType::kModel, repo_id);
  const hub::CommitResult r = publish_pretrained_model(s.cfg, meta, dir, repo_id, client);
  if (!r.commit.empty()) LOG_INFO << "hub: commit " << r.commit << " (" << r.lfs_files.size() + r.lfs_already.size()
                                  << " LFS file(s), " << r.regular_files.size() << " regular)";
  if (s.ema && fs::exists(ema_dir / "config.json")) {
    const std::string ema_repo = repo_id + "-ema";
    try {
      publish_pretrained_model(s.cfg, meta, ema_dir, ema_repo, client);
      LOG_INFO << "Pushed EMA weights to " << ema_repo;
    } catch (const std::exception& e) {
      LOG_WARNING << "Failed to push EMA weights to " << ema_repo << ": " << e.what();
    }
  }
}

}  // namespace lerobot
