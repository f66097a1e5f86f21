// The command forms of LeRobot's multi-GPU guide that lerobot-train's parser does not take as
// they are written, rewritten once, before anything else reads the train flags:
//   --config FILE / --config=FILE   → --config_path=FILE
//   key=value (a bare word)          → --key=value (an unknown key then gets the usual hint)
//   --local_rank=N / --local-rank N  (what torch.distributed.launch adds) → removed, checked
//                                      against LOCAL_RANK, or exported as LOCAL_RANK when unset
//   --use_amp[=BOOL]                 → returned, applied after parsing (apply_use_amp)
#include <cstdlib>
#include <regex>

#include "commands.h"
#include "lerobot/common/config/config.h"
#include "lerobot/common/device.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/train/train_config.h"

namespace lerobot::app {
namespace {

// "--local-rank" → "local_rank": the name of a --flag word, dashes as underscores, "" for a non-flag.
std::string flag_name(const std::string& word) {
  if (word.rfind("--", 0) != 0) return "";
  std::string name = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
  for (auto& c : name) c = c == '-' ? '_' : c;
  return name;
}

bool is_bool_word(const std::string& w) {
  for (const char* b : {"true", "True", "false", "False", "1", "0", "yes", "no"})
    if (w == b) return true;
  return false;
}

void check_local_rank(const std::string& value, const std::string& flag) {
  size_t pos = 0;
  int rank = -1;
  try {
    rank = std::stoi(value, &pos);
  } catch (const std::exception&) {
  }
  if (rank < 0 || pos != value.size())
    throw_usage("bad value '" + value + "' for " + flag + ": expected a local rank (an integer >= 0)", flag);
  const char* env = std::getenv("LOCAL_RANK");
  if (env == nullptr || *env == '\0') {
    // An older launcher that passes the local rank only as a flag: the environment then says it.
    ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    return;
  }
  if (std::string(env) != std::to_string(rank))
    throw_usage(flag + "=" + value + " disagrees with LOCAL_RANK=" + env + " in the environment", flag,
                "start the run with one launcher (torchrun sets LOCAL_RANK and adds no flag), or drop " + flag);
}

}  // namespace

GuideForms accept_guide_forms(Args& args) {
  static const std::regex flag_key("[A-Za-z_][A-Za-z0-9_.-]*");  // a bare key=value's key
  GuideForms forms;
  Args out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    const size_t eq = w.find('=');
    const bool has_eq = eq != std::string::npos;
    const std::string name = flag_name(w);
    const std::string key = has_eq ? w.substr(0, eq) : w;  // "--local-rank", as written
    const std::string value = has_eq ? w.substr(eq + 1) : std::string();
    const bool next_is_value = !has_eq && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    if (name == "config") {
      if (!has_eq && !next_is_value)
        throw_usage("flag " + w + " has no value", w, "write --config FILE (the same as --config_path=FILE)");
      out.push_back("--config_path=" + (has_eq ? value : args[++i]));
    } else if (name == "local_rank") {
      if (!has_eq && !next_is_value) throw_usage("flag " + w + " has no value", w, "write " + w + "=<local rank>");
      check_local_rank(has_eq ? value : args[++i], key);
    } else if (name == "use_amp") {
      // A switch: alone it means true; a separate word is its value only when it is a boolean.
      std::string text = has_eq ? value : "true";
      if (!has_eq && next_is_value && is_bool_word(args[i + 1])) text = args[++i];
      forms.use_amp_flag = detail::parse_bool_text(text, "use_amp");
    } else if (has_eq && std::regex_match(key, flag_key)) {
      out.push_back("--" + w);  // the guide's "batch_size=16": a flag without its dashes
    } else {
      out.push_back(w);
      if (!name.empty() && next_is_value) out.push_back(args[++i]);  // "--key value": the value stays as it is
    }
  }
  args = out;
  return forms;
}

void apply_use_amp(const GuideForms& forms, TrainPipelineConfig& cfg, const LaunchEnv& env, Args& args) {
  if (!forms.use_amp_flag) return;
  for (const auto& a : args)
    if (flag_name(a) == "accelerator.mixed_precision")
      throw_usage("--use_amp and " + a + " both set the mixed precision", "--use_amp",
                  "drop --use_amp (--accelerator.mixed_precision is LeRobot 0.6's flag for it)");
  std::string& mixed_precision = cfg.accelerator.mixed_precision;
  if (!*forms.use_amp_flag) {
    if (env.rank == 0) LOG_INFO << "--use_amp=false: mixed precision stays '" << mixed_precision << "'";
    return;
  }
  // LeRobot's policy.use_amp (before accelerate) ran the forward under torch.autocast(device.type)
  // with a GradScaler: fp16 with loss scaling on CUDA, autocast's CPU dtype (bf16) on the CPU.
  const bool cuda = resolve_device(cfg.policy ? cfg.policy->device : std::nullopt, env.local_rank).is_cuda();
  mixed_precision = cuda ? "fp16" : "bf16";
  args.push_back("--accelerator.mixed_precision=" + mixed_precision);  // what processes we launch parse
  if (env.rank == 0)
    LOG_INFO << "--use_amp: mixed precision " << mixed_precision << " (--accelerator.mixed_precision="
             << mixed_precision << "), LeRobot's policy.use_amp autocast on " << (cuda ? "CUDA" : "the CPU");
}

}  // namespace lerobot::app
