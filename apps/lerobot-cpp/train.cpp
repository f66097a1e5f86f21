// `lerobot-cpp train`: LeRobot's lerobot-train flags, plus accelerate's launcher flags
// (--num_processes, --num_machines, --machine_rank, --main_process_ip, --main_process_port):
// with --num_processes=N > 1 and no launcher around us, this process becomes the local launcher
// and starts N copies of itself.
#include <iostream>

#include "commands.h"
#include "lerobot/common/config/flags.h"
#include "lerobot/common/logging.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/distributed/launcher.h"
#include "lerobot/eval/record.h"
#include "lerobot/hub/hub_client.h"
#include "lerobot/train/hub_publish.h"
#include "lerobot/train/metrics/wandb_sidecar.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/trainer.h"

namespace lerobot::app {
namespace {

const char* kLauncherHelp = R"(launcher flags (accelerate's names; not part of train_config.json):
  --num_processes=<int>        processes on this machine, one per GPU (default: 1)
  --num_machines=<int>         machines taking part (default: 1)
  --machine_rank=<int>         this machine's index (default: 0)
  --main_process_ip=<str>      address of machine 0 (default: 127.0.0.1)
  --main_process_port=<int>    rendezvous port on machine 0 (default: a free port on one machine, 29500 on several)
)";

struct LauncherFlags {
  int num_processes = 1;
  int num_machines = 1;
  int machine_rank = 0;
  std::string main_process_ip = "127.0.0.1";
  int main_process_port = 0;
};

int to_int(const std::string& value, const std::string& flag) {
  try {
    size_t pos = 0;
    const int v = std::stoi(value, &pos);
    if (pos == value.size()) return v;
  } catch (const std::exception&) {
  }
  throw_usage("bad value '" + value + "' for " + flag + ": expected an integer", flag);
}

// Removes the launcher flags from `args` (they are not config fields).
LauncherFlags take_launcher_flags(Args& args) {
  LauncherFlags lf;
  for (const auto& [name, value] : take_named_flags(
           args, {"num_processes", "num_machines", "machine_rank", "main_process_ip", "main_process_port"})) {
    const std::string flag = "--" + name;
    if (name == "num_processes") lf.num_processes = to_int(value, flag);
    else if (name == "num_machines") lf.num_machines = to_int(value, flag);
    else if (name == "machine_rank") lf.machine_rank = to_int(value, flag);
    else if (name == "main_process_ip") lf.main_process_ip = value;
    else lf.main_process_port = to_int(value, flag);
  }
  if (lf.num_processes < 1)
    throw_usage("--num_processes must be >= 1, got " + std::to_string(lf.num_processes), "--num_processes",
                "pass --num_processes=N with N the GPUs (or CPU processes) to use on this machine");
  if (lf.num_machines < 1)
    throw_usage("--num_machines must be >= 1, got " + std::to_string(lf.num_machines), "--num_machines");
  if (lf.machine_rank < 0 || lf.machine_rank >= lf.num_machines)
    throw_usage("--machine_rank must be in [0, " + std::to_string(lf.num_machines) + "), got " +
                    std::to_string(lf.machine_rank),
                "--machine_rank");
  if (lf.main_process_port < 0 || lf.main_process_port > 65535)
    throw_usage("--main_process_port must be a TCP port (0-65535), got " + std::to_string(lf.main_process_port),
                "--main_process_port");
  return lf;
}

// The built-in default: with no dataset, train on reach2d expert demonstrations (generated once
// into the cache) and evaluate in the simulator at the end. These values come before the user's
// flags, so any of them can be overridden. Sized so that ACT reaches its target on a 2-core CPU
// within the README's time budget (docs/BENCHMARKS.md).
constexpr int64_t kDemoEpisodes = 200;
const std::vector<std::string> kDemoDefaults = {
    "--env.type=reach2d", "--env.image_size=64", "--steps=1800", "--batch_size=16", "--log_freq=100",
    "--save_freq=1800", "--env_eval_freq=1800", "--eval.n_episodes=50", "--num_workers=1"};
// ACT's sizes for the demo (the default policy type there); other types keep their own defaults.
const std::vector<std::string> kDemoActDefaults = {
    "--policy.chunk_size=10", "--policy.n_action_steps=10", "--policy.dim_model=128", "--policy.n_heads=4",
    "--policy.dim_feedforward=512", "--policy.n_encoder_layers=2", "--policy.n_vae_encoder_layers=2",
    "--policy.optimizer_lr=3e-4", "--policy.optimizer_lr_backbone=1e-4"};

// VQ-BeT's for the demo: its defaults are LeRobot's PushT ones (an 84x84 crop, which does not fit
// the demo's 64-pixel camera, and a 20000-step VQ-VAE phase, longer than the whole demo).
const std::vector<std::string> kDemoVqbetDefaults = {
    "--policy.crop_shape=[56,56]", "--policy.n_obs_steps=3", "--policy.n_vqvae_training_steps=600",
    "--policy.scheduler_warmup_steps=100", "--policy.gpt_n_layer=4", "--policy.gpt_n_head=4",
    "--policy.gpt_hidden_dim=128", "--policy.gpt_input_dim=128", "--policy.gpt_output_dim=128"};

// The value of the last --policy.type=... in args ("" without one).
std::string policy_type_flag(const Args& args) {
  std::string type;
  for (const auto& a : args)
    if (a.rfind("--policy.type=", 0) == 0) type = a.substr(std::string("--policy.type=").size());
  return type;
}

bool has_flag_prefix(const Args& args, const std::string& prefix) {
  for (const auto& a : args)
    if (a.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

int train_main(const Args& input) {
  if (wants_help(input)) {
    register_all_configs();
    TrainPipelineConfig cfg;
    std::cout << "usage: lerobot-cpp train [--flag=value ...]\n\n"
                 "Flags keep LeRobot's names (dotted, --key=value). --policy.path=DIR starts from a\n"
                 "pretrained_model; --config_path=FILE applies a YAML/JSON config before the flags;\n"
                 "--resume=true --config_path=OUT/checkpoints/last/pretrained_model continues a run.\n"
                 "--batch_size is per process: the effective batch is batch_size x processes x\n"
                 "accumulation steps; the learning rate is never scaled for you.\n"
                 "Without --dataset.root (and without --config_path or --policy.path) it runs the built-in\n"
                 "DEMO: ACT (or --policy.type's policy) on reach2d expert demonstrations generated into the\n"
                 "cache, then an evaluation.\n"
                 "--policy.push_to_hub=true --policy.repo_id=<user>/<name> publishes pretrained_model/ and\n"
                 "a model card to the Hub after training (HF_TOKEN or `hf auth login`; checked before the\n"
                 "first step). Metrics go to train_metrics.jsonl and tensorboard/ in the output dir, and with\n"
                 "--wandb.enable=true also to Weights & Biases (rank 0, through the Python wandb package:\n"
                 "`pip install wandb`, `wandb login` or --wandb.mode=offline; see docs/WANDB.md).\n"
                 "The forms of LeRobot's multi-GPU guide work too: --config FILE (= --config_path=FILE),\n"
                 "key=value without dashes (= --key=value), the --local_rank N that torch.distributed.launch\n"
                 "adds (checked against LOCAL_RANK), and --use_amp (LeRobot's old policy.use_amp:\n"
                 "--accelerator.mixed_precision=fp16 on CUDA, bf16 on the CPU).\n\n"
              << kLauncherHelp << "\nflags:\n";
    print_help(cfg, std::cout);
    return 0;
  }
  Args args = input;
  const GuideForms guide = accept_guide_forms(args);  // --config FILE, key=value, --local_rank, --use_amp
  const LauncherFlags lf = take_launcher_flags(args);
  resolve_hub_policy_flags(args);  // --policy.path=org/name: the snapshot in $HF_HUB_CACHE
  resolve_hub_resume_flags(args);  // --resume=true --config_path=org/name: its latest checkpoint
  const bool demo = !has_flag_prefix(args, "--dataset") && !has_flag_prefix(args, "--config_path") &&
                    !has_flag_prefix(args, "--policy.path") && !has_flag_prefix(args, "--resume=true");
  if (demo) {
    const std::string type = policy_type_flag(args);
    if (type.empty()) args.insert(args.begin(), "--policy.type=act");
    if (type.empty() || type == "act") args.insert(args.begin(), kDemoActDefaults.begin(), kDemoActDefaults.end());
    if (type == "vqbet") args.insert(args.begin(), kDemoVqbetDefaults.begin(), kDemoVqbetDefaults.end());
    // The ResNet policies start from random weights (no download); SmolVLA needs its backbone's
    // config and tokenizer (--policy.vlm_model_name: the Hub's SmolVLM2 by default).
    if (type != "smolvla") args.insert(args.begin(), "--policy.pretrained_backbone_weights=null");
    args.insert(args.begin(), kDemoDefaults.begin(), kDemoDefaults.end());
  }
  // Parse before launching anything: a typo fails here, in the launcher, before any work starts.
  TrainPipelineConfig cfg = parse_train_config(args);
  if (demo) {
    LOG_INFO << "DEMO mode (no --dataset.root given): training " << cfg.policy->type() << " on the built-in "
             << cfg.env->type() << " demonstrations (" << kDemoEpisodes
             << " episodes, generated once into the cache); pass --dataset.root=DIR to train on your data";
    const fs::path root = ensure_builtin_dataset(*cfg.env, kDemoEpisodes);
    args.push_back("--dataset.root=" + root.string());
    cfg.dataset.root = root.string();
  }
  const LaunchEnv env = detect_launch_env();
  apply_use_amp(guide, cfg, env, args);
  // --policy.push_to_hub / --save_checkpoint_to_hub: the token is checked against the Hub now, not
  // after hours of training.
  if (env.rank == 0) preflight_publish(cfg, hub::HubClient(hub::HubEnv::from_environment()));
  const int total = lf.num_processes * lf.num_machines;
  if (total > 1 && env.world_size == 1) {
    // A missing wandb package or login stops the launcher itself, before any process starts.
    if (cfg.wandb.enable && !cfg.wandb.project.empty() && lf.machine_rank == 0) check_wandb_ready(cfg.wandb);
    LocalLaunchOptions lo;
    lo.num_processes = lf.num_processes;
    lo.num_machines = lf.num_machines;
    lo.machine_rank = lf.machine_rank;
    lo.main_process_ip = lf.main_process_ip;
    lo.main_process_port = lf.main_process_port != 0 ? lf.main_process_port : (lf.num_machines > 1 ? 29500 : 0);
    Args child{"lerobot-cpp", "train"};  // argv[0], then the command
    child.insert(child.end(), args.begin(), args.end());
    const LaunchResult r = launch_local(child, lo);
    if (r.exit_code != 0) std::cerr << "error: " << r.message << "\n";
    return r.exit_code;
  }
  const TrainResult result = train(std::move(cfg), env);
  if (env.rank == 0)
    LOG_INFO << "Training finished at step " << result.final_step << "; outputs in " << result.output_dir.string();
  return 0;
}

}  // namespace lerobot::app
