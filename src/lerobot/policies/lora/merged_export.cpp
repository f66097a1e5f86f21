// Merged export of an adapter checkpoint (see merged_export.h).
#include "lerobot/policies/lora/merged_export.h"

#include <unistd.h>

#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/pretrained_io.h"

namespace lerobot::lora {

MergedExport export_merged_policy(const fs::path& src, const fs::path& out) {
  const std::string fix_src =
      "pass the pretrained_model folder of a --peft.* run (<output_dir>/checkpoints/<step>/pretrained_model); a plain "
      "checkpoint needs no export";
  if (!fs::exists(src / kConfigFile))
    throw_usage("'" + src.string() + "' holds no config.json: not a pretrained_model folder", "--policy.path", fix_src);
  std::unique_ptr<PolicyConfig> config = load_policy_config(src / kConfigFile);
  if (!config->use_peft || !fs::exists(src / "adapter_config.json"))
    throw_usage("'" + src.string() + "' is not an adapter checkpoint (" +
                    (config->use_peft ? std::string("no adapter_config.json") : "config.json has no use_peft: true") +
                    "): there are no adapters to merge",
                "--policy.path", fix_src);
  if (fs::exists(out))
    throw_usage("the output folder '" + out.string() + "' already exists", "--output_dir",
                "pass a folder that does not exist yet, or remove that one first");

  // The base from base_model_name_or_path plus the adapters, on the CPU, folded.
  PolicyPtr policy = load_pretrained_weights(*config, src, torch::Device(torch::kCPU));
  MergedExport summary;
  for (const auto& p : policy->named_parameters())
    if (is_adapter_parameter(p.key()) && p.key().find(".lora_A.") != std::string::npos) ++summary.merged_modules;
  merge_adapters(*policy);
  TensorMap weights;
  for (const auto& [key, t] : policy->state_dict())
    if (!is_adapter_parameter(key)) weights[key] = t;
  summary.tensors = static_cast<int64_t>(weights.size());

  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent);
  const fs::path tmp = parent / ("." + out.filename().string() + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  try {
    fs::create_directories(tmp);
    config->use_peft = false;
    write_file_atomic(tmp / kConfigFile, policy_config_json(*config));
    save_safetensors(tmp / kModelFile, weights);
    // The processors as the run saved them (stats, tokenizer/); not the PEFT files, nor
    // train_config.json and its lerobot_cpp_config.json (its policy says use_peft: a merged model is
    // not a run to resume).
    static const std::set<std::string> skip = {kConfigFile, kModelFile, "adapter_config.json",
                                               "adapter_model.safetensors", "train_config.json",
                                               "lerobot_cpp_config.json"};
    for (auto it = fs::recursive_directory_iterator(src); it != fs::recursive_directory_iterator(); ++it) {
      const fs::path rel = fs::relative(it->path(), src);
      if (it.depth() == 0 && skip.count(rel.string())) continue;
      if (it->is_directory()) fs::create_directories(tmp / rel);  // e.g. tokenizer/
      else if (it->is_regular_file()) write_file_atomic(tmp / rel, read_file(it->path(), std::uintmax_t{4} << 30));
    }
    fs::rename(tmp, out);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  fsync_dir(parent);
  return summary;
}

}  // namespace lerobot::lora
