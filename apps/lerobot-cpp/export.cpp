// `lerobot-cpp export`: turns the checkpoint of a --peft.* run (adapters on a base policy) into a
// plain pretrained_model folder with the adapters folded into the weights, which eval, infer and
// InferencePolicy load like any other policy (policies/lora/merged_export.h).
#include <iostream>

#include "commands.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/policies/lora/merged_export.h"

namespace lerobot::app {
namespace {

const char* kExportUsage = R"(usage: lerobot-cpp export --policy.path=DIR --merge_adapters=true --output_dir=OUT

Writes the adapter checkpoint DIR (the pretrained_model folder of a run trained with --peft.*:
config.json with use_peft: true, adapter_config.json, adapter_model.safetensors) as a plain
pretrained_model folder OUT: the base policy named by adapter_config.json's
base_model_name_or_path with each LoRA adapter folded into its weight (W + lora_alpha/r * B A,
as PEFT's merge_and_unload), config.json without use_peft, model.safetensors, and the processor
files copied. OUT must not exist; it appears complete or not at all. The base is read once, here;
OUT no longer needs it:
  lerobot-cpp eval --policy.path=OUT ...   lerobot-cpp infer --policy.path=OUT ...
--policy.path may be a Hub id (org/name), downloaded as for eval.
)";

const std::vector<std::string> kExportFlags = {"--policy.path", "--merge_adapters", "--output_dir"};

}  // namespace

int export_main(const Args& input) {
  if (wants_help(input)) {
    std::cout << kExportUsage;
    return 0;
  }
  Args args = input;
  resolve_hub_policy_flags(args);
  auto flags = take_named_flags(args, {"policy.path", "merge_adapters", "output_dir"});
  if (!args.empty()) {
    const std::string key = args.front().substr(0, args.front().find('='));
    const std::string near = nearest(key, kExportFlags);
    throw_usage("unknown argument '" + args.front() + "'", key,
                near.empty() ? "lerobot-cpp export takes " + join(kExportFlags, ", ") : "did you mean '" + near + "'?");
  }
  if (!flags.count("policy.path"))
    throw_usage("export needs the adapter checkpoint", "--policy.path",
                "pass --policy.path=<output_dir>/checkpoints/<step>/pretrained_model of a --peft.* run");
  const std::string merge = flags.count("merge_adapters") ? flags["merge_adapters"] : "";
  if (merge != "true" && merge != "True" && merge != "1")
    throw_usage(merge.empty() ? "export needs --merge_adapters=true" : "--merge_adapters=" + merge + " exports nothing",
                "--merge_adapters",
                "pass --merge_adapters=true (the adapters folded into the base weights; an adapter checkpoint "
                "loads as it is without an export)");
  if (!flags.count("output_dir"))
    throw_usage("export needs a folder to write", "--output_dir", "pass --output_dir=<new folder>");
  const auto r = lora::export_merged_policy(flags["policy.path"], flags["output_dir"]);
  std::cout << "merged " << r.merged_modules << " LoRA adapters into " << flags["output_dir"] << " ("
            << r.tensors << " tensors in model.safetensors)\n";
  return 0;
}

}  // namespace lerobot::app
