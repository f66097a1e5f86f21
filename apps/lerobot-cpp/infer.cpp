// `lerobot-cpp infer`: run a pretrained policy on one observation stored in a safetensors file and
// write the predicted action chunk — a policy check without a robot, a simulator or Python
// (scripts/check_python_lerobot.py compares the result with Python LeRobot's).
#include <torch/torch.h>

#include <iostream>
#include <optional>

#include "commands.h"
#include "lerobot/common/device.h"
#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/policies/inference.h"

namespace lerobot::app {
namespace {

const char* kInferUsage = R"(usage: lerobot-cpp infer --policy.path=DIR --observation=FILE [--output=FILE] [--policy.device=cpu|cuda]
       lerobot-cpp infer --policy.path=DIR --dataset.root=DATASET --frame=INDEX [--output=FILE]

Loads a pretrained policy (a .../checkpoints/<step>/pretrained_model directory: config.json,
model.safetensors, processor files), runs it on one observation and prints the whole action chunk.
FILE (safetensors) holds one tensor per input feature under LeRobot's keys, without a batch
dimension: cameras uint8 (H, W, C) or (C, H, W), or float (C, H, W) in [0, 1]; state float (S).
--dataset.root/--frame take the observation from frame INDEX (global index) of a LeRobot
dataset instead, and also print the action recorded there.
--output writes the whole predicted chunk (chunk_size, action dim), in robot units, as "action".
--seed=N seeds LibTorch's generator just before the prediction: a sampling policy (Diffusion) then
draws the noise Python draws after torch.manual_seed(N) on the CPU (scripts/check_python_lerobot.py).
--task="..." is the task in words, for a policy that reads it (SmolVLA); with --dataset.root the
frame's own task is used unless --task is given.
--left_over=FILE (safetensors, "action": (steps, action dim) in robot units, e.g. the rows of a
previous --output not executed yet) predicts with real-time chunking (SmolVLA; LeRobot's RTC,
guided): the chunk is pulled toward those actions, the first --inference_delay=N of them (default
0) fully, fading out by --execution_horizon=H. The settings are the checkpoint's rtc_config, or
LeRobot's RTCConfig defaults when it has none.
)";

const std::vector<std::string> kInferFlags = {"--policy.path", "--observation", "--output", "--policy.device",
                                              "--dataset.root", "--frame", "--seed", "--task",
                                              "--left_over", "--inference_delay", "--execution_horizon"};

// A whole number >= 0 given to `flag`.
int64_t non_negative(const std::string& value, const std::string& flag, const std::string& what) {
  try {
    size_t pos = 0;
    const long long v = std::stoll(value, &pos);
    if (pos == value.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw_usage("bad value '" + value + "' for " + flag + ": expected " + what + " >= 0", flag);
}

}  // namespace

int infer_main(const Args& input) {
  if (wants_help(input)) {
    std::cout << kInferUsage;
    return 0;
  }
  Args args = input;
  resolve_hub_policy_flags(args);  // --policy.path=org/name: the snapshot in $HF_HUB_CACHE
  auto flags = take_named_flags(args, {"policy.path", "observation", "output", "policy.device", "dataset.root", "frame",
                                       "seed", "task", "left_over", "inference_delay", "execution_horizon"});
  for (const char* rtc_flag : {"inference_delay", "execution_horizon"})
    if (flags.count(rtc_flag) && !flags.count("left_over"))
      throw_usage(std::string("--") + rtc_flag + " needs --left_over", std::string("--") + rtc_flag,
                  "pass --left_over=FILE.safetensors (the previous chunk's actions not executed yet)");
  if (!args.empty()) {
    const std::string key = args.front().substr(0, args.front().find('='));
    const std::string near = nearest(key, kInferFlags);
    throw_usage("unknown argument '" + args.front() + "'", key,
                near.empty() ? "lerobot-cpp infer takes " + join(kInferFlags, ", ") : "did you mean '" + near + "'?");
  }
  if (!flags.count("policy.path"))
    throw_usage("infer needs a policy", "--policy.path", "pass --policy.path=.../pretrained_model");
  const bool from_dataset = flags.count("dataset.root") > 0;
  if (from_dataset != (flags.count("frame") > 0))
    throw_usage("--dataset.root and --frame go together", from_dataset ? "--frame" : "--dataset.root",
                "pass both --dataset.root=DIR and --frame=INDEX");
  if (from_dataset == (flags.count("observation") > 0))
    throw_usage(from_dataset ? "give the observation once" : "infer needs an observation", "--observation",
                "pass --observation=FILE.safetensors (one tensor per input feature), or --dataset.root=DIR --frame=N");
  const torch::Device device = resolve_device(flags.count("policy.device") ? flags["policy.device"] : "cpu");

  InferencePolicy policy(flags["policy.path"], device);
  TensorMap observation;
  std::optional<torch::Tensor> recorded;
  if (from_dataset) {
    LeRobotDataset ds(flags["dataset.root"]);
    const int64_t index = non_negative(flags["frame"], "--frame", "a frame index");
    if (index >= ds.num_frames())
      throw_usage("--frame=" + flags["frame"] + " is past the dataset's last frame " + std::to_string(ds.num_frames() - 1),
                  "--frame");
    DatasetItem item = ds.get_item(index);
    for (auto& [k, v] : item.tensors) observation[k] = v;
    if (!flags.count("task")) policy.set_task(item.task);
    for (const auto& [k, v] : item.tensors)  // the dataset's action, under its --rename_map name too
      if (rename_feature_key(k, policy.processors().rename_map) == "action") recorded = v;
    flags["observation"] = flags["dataset.root"] + " frame " + flags["frame"];
  } else {
    observation = load_safetensors(flags["observation"]);
  }
  if (flags.count("task")) policy.set_task(flags["task"]);
  if (flags.count("seed")) torch::manual_seed(uint64_t(non_negative(flags["seed"], "--seed", "a seed")));
  torch::Tensor left_over;
  if (flags.count("left_over")) {
    const TensorMap file = load_safetensors(flags["left_over"]);
    if (!file.count("action"))
      throw_usage("no 'action' tensor in " + flags["left_over"], "--left_over",
                  "save the leftover (steps, action dim) under \"action\", as --output writes a chunk");
    left_over = file.at("action");
    policy.ensure_rtc("--left_over");
  }
  torch::Tensor chunk;
  try {
    if (left_over.defined()) {
      std::optional<int64_t> horizon;
      if (flags.count("execution_horizon"))
        horizon = non_negative(flags["execution_horizon"], "--execution_horizon", "a step count");
      const int64_t delay =
          flags.count("inference_delay") ? non_negative(flags["inference_delay"], "--inference_delay", "a step count") : 0;
      chunk = policy.predict_action_chunk(observation, left_over, delay, horizon);
    } else {
      chunk = policy.predict_action_chunk(observation);
    }
  } catch (const Error& e) {  // the observation does not fit the policy (a missing input, a wrong image shape)
    if (e.kind() != ErrorKind::kUsage) throw;
    if (e.where() == "left_over" || e.where() == "prev_chunk_left_over")  // the leftover does not fit the chunk
      throw_usage(e.problem() + " (" + flags["left_over"] + ")", "--left_over", e.fix());
    throw_data(e.problem(), flags["observation"],
               e.fix().empty() ? "save one tensor per input feature of config.json under its key" : e.fix());
  }
  std::cout << "action chunk " << chunk.size(0) << " x " << chunk.size(1) << " (robot units, one action per line):\n";
  const torch::Tensor all = chunk.to(torch::kDouble).contiguous();
  for (int64_t t = 0; t < all.size(0); ++t) {
    std::cout << "  [" << t << "]";
    for (int64_t i = 0; i < all.size(1); ++i) std::cout << " " << all[t][i].item<double>();
    std::cout << "\n";
  }
  if (recorded) {
    const torch::Tensor r = recorded->to(torch::kDouble).flatten();
    std::cout << "recorded action at that frame:";
    for (int64_t i = 0; i < r.numel(); ++i) std::cout << " " << r[i].item<double>();
    std::cout << "\n";
  }
  if (flags.count("output")) save_safetensors(flags["output"], {{"action", chunk.contiguous()}});
  return 0;
}

}  // namespace lerobot::app
