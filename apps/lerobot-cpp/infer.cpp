// `lerobot-cpp infer`: run a pretrained policy on one observation stored in a safetensors file and
// write the predicted action chunk — a policy check without a robot, a simulator or Python
// (scripts/check_python_lerobot.py compares the result with Python LeRobot's).
#include <torch/torch.h>

#include <iostream>

#include "commands.h"
#include "lerobot/common/device.h"
#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/inference.h"

namespace lerobot::app {
namespace {

const char* kInferUsage = R"(usage: lerobot-cpp infer --policy.path=DIR --observation=FILE [--output=FILE] [--policy.device=cpu|cuda]

Loads a pretrained policy (a .../checkpoints/<step>/pretrained_model directory: config.json,
model.safetensors, processor files), runs it on one observation and prints the first action.
FILE (safetensors) holds one tensor per input feature under LeRobot's keys, without a batch
dimension: cameras uint8 (H, W, C) or (C, H, W), or float (C, H, W) in [0, 1]; state float (S).
--output writes the whole predicted chunk (chunk_size, action dim), in robot units, as "action".
)";

}  // namespace

int infer_main(const Args& input) {
  if (wants_help(input)) {
    std::cout << kInferUsage;
    return 0;
  }
  Args args = input;
  auto flags = take_named_flags(args, {"policy.path", "observation", "output", "policy.device"});
  if (!args.empty())
    throw_usage("unknown argument '" + args.front() + "'", args.front(),
                "lerobot-cpp infer takes --policy.path, --observation, --output and --policy.device");
  if (!flags.count("policy.path"))
    throw_usage("infer needs a policy", "--policy.path", "pass --policy.path=.../pretrained_model");
  if (!flags.count("observation"))
    throw_usage("infer needs an observation", "--observation",
                "pass --observation=FILE.safetensors (one tensor per input feature)");
  const torch::Device device = resolve_device(flags.count("policy.device") ? flags["policy.device"] : "cpu");

  InferencePolicy policy(flags["policy.path"], device);
  const TensorMap observation = load_safetensors(flags["observation"]);
  torch::Tensor chunk;
  try {
    chunk = policy.predict_action_chunk(observation);
  } catch (const Error& e) {  // the observation does not fit the policy (a missing input, a wrong image shape)
    if (e.kind() != ErrorKind::kUsage) throw;
    throw_data(e.problem(), flags["observation"],
               e.fix().empty() ? "save one tensor per input feature of config.json under its key" : e.fix());
  }
  std::cout << "action chunk " << chunk.size(0) << " x " << chunk.size(1) << "; first action:";
  const torch::Tensor first = chunk[0].to(torch::kDouble).contiguous();
  for (int64_t i = 0; i < first.size(0); ++i) std::cout << " " << first[i].item<double>();
  std::cout << "\n";
  if (flags.count("output")) save_safetensors(flags["output"], {{"action", chunk.contiguous()}});
  return 0;
}

}  // namespace lerobot::app
