// Runs begun in Python LeRobot 0.6 (#18 point 6): the train_config.json LeRobot writes for an ACT
// run (tests/fixtures/lerobot-0.6-run/, every key, built from LeRobot's dataclasses) parses and is
// written back key for key; keys that would change the result and are not supported are refused
// by name; a checkpoint in LeRobot's layout (LeRobot's train_config.json, no lerobot.cpp extension
// file) resumes at the next step with the scheduler's learning rate and the saved Adam moments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/train/train_config.h"
#include "lerobot/train/train_setup.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;

namespace {

const fs::path kFixtureDir = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-0.6-run";

Json fixture(const char* name) { return Json::parse(read_file(kFixtureDir / name)); }

// The first place where two JSON trees differ (keys, key order or values); "" when equal.
std::string first_difference(const Json& a, const Json& b, const std::string& path = "") {
  if (a.is_object() && b.is_object()) {
    std::vector<std::string> ka, kb;
    for (auto it = a.begin(); it != a.end(); ++it) ka.push_back(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) kb.push_back(it.key());
    // normalization_mapping is a dict that we keep sorted (LeRobot: VISUAL, STATE, ACTION); its
    // order carries no meaning, so only its keys and values are compared.
    const bool any_order = path.size() >= 21 && path.compare(path.size() - 21, 21, "normalization_mapping") == 0;
    if (any_order) {
      std::sort(ka.begin(), ka.end());
      std::sort(kb.begin(), kb.end());
    }
    for (size_t i = 0; i < std::max(ka.size(), kb.size()); ++i) {
      const std::string x = i < ka.size() ? ka[i] : "<none>", y = i < kb.size() ? kb[i] : "<none>";
      if (x != y) return path + ": key #" + std::to_string(i) + " is '" + x + "' vs '" + y + "'";
    }
    for (const auto& k : ka)
      if (auto d = first_difference(a[k], b[k], path.empty() ? k : path + "." + k); !d.empty()) return d;
    return "";
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i)
      if (auto d = first_difference(a[i], b[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
    return "";
  }
  return a == b ? "" : path + ": " + a.dump() + " vs " + b.dump();
}

fs::path write_json(const fs::path& p, const Json& j) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << j.dump(4);
  return p;
}

std::vector<Json> read_jsonl_rows(const fs::path& p) {
  std::vector<Json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

// LeRobot 0.6's cosine_decay_with_warmup lr_lambda (optim/schedulers.py), written out here from
// its definition (no auto-scaling: num_decay_steps <= steps).
double cosine_decay_with_warmup(int64_t step, int64_t warmup, int64_t decay, double peak_lr, double decay_lr) {
  if (step < warmup) {
    if (step <= 0) return 1.0 / (warmup + 1);
    const double frac = 1.0 - static_cast<double>(step) / warmup;
    return (1.0 / (warmup + 1) - 1.0) * frac + 1.0;
  }
  const double s = static_cast<double>(std::min(step, decay));
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * s / decay));
  const double alpha = decay_lr / peak_lr;
  return (1.0 - alpha) * cosine + alpha;
}

// The keys of a JSON tree with every leaf replaced by null (lists too).
Json key_tree(const Json& j) {
  if (!j.is_object()) return nullptr;
  Json out = Json::object();
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = key_tree(it.value());
  return out;
}

void expect_same_tensors(const fs::path& a, const fs::path& b) {
  EXPECT_EQ(count_different_tensors(a, b), 0) << a << " vs " << b;
}

}  // namespace

TEST(LeRobotRun, TrainConfigWithEveryKeyParsesAndIsWrittenBackKeyForKey) {
  const fs::path file = kFixtureDir / "act_train_config.json";
  TrainPipelineConfig cfg = parse_train_config({"--config_path=" + file.string()});
  ASSERT_TRUE(cfg.policy);
  EXPECT_EQ(cfg.policy->type(), "act");
  const auto* act = cfg.policy.as<ACTConfig>();
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->dim_model, 512);
  EXPECT_EQ(act->chunk_size, 100);
  ASSERT_TRUE(cfg.optimizer);
  EXPECT_EQ(cfg.optimizer->type(), "adamw");
  EXPECT_EQ(cfg.dataset.repo_id, "lerobot/aloha_sim_transfer_cube_human");
  EXPECT_EQ(cfg.job.image, "huggingface/lerobot-gpu:latest");
  EXPECT_TRUE(cfg.accelerator.ddp.find_unused_parameters);
  EXPECT_EQ(cfg.accelerator.activation_checkpointing.mode, "none");
  EXPECT_EQ(cfg.eval.batch_size, 11);
  EXPECT_EQ(cfg.dataloader_multiprocessing_context.value_or(""), "spawn");
  // LeRobot's defaults are ours: nothing in this file is reported but the video backend it names.
  EXPECT_EQ(cfg.file_unused_keys, std::vector<std::string>{"dataset.video_backend"});

  // Written back, the file is LeRobot's again: same keys in the same order, same values.
  const fs::path out = train_scratch() / "lerobot_roundtrip";
  fs::create_directories(out);
  write_train_config(cfg, out);
  const std::string diff = first_difference(Json::parse(read_file(out / "train_config.json")), fixture("act_train_config.json"));
  EXPECT_EQ(diff, "");
}

TEST(LeRobotRun, DiffusionTrainConfigParsesAndIsWrittenBackKeyForKey) {
  const fs::path file = kFixtureDir / "diffusion_train_config.json";
  TrainPipelineConfig cfg = parse_train_config({"--config_path=" + file.string()});
  ASSERT_TRUE(cfg.policy);
  EXPECT_EQ(cfg.policy->type(), "diffusion");
  ASSERT_TRUE(cfg.scheduler);
  EXPECT_EQ(cfg.scheduler->type(), "diffuser");
  EXPECT_TRUE(cfg.ema.enable);
  const fs::path out = train_scratch() / "lerobot_roundtrip_diffusion";
  fs::create_directories(out);
  write_train_config(cfg, out);
  EXPECT_EQ(first_difference(Json::parse(read_file(out / "train_config.json")), fixture("diffusion_train_config.json")),
            "");
}

// A LeRobot train_config.json with its PushT env (envs/configs.py's PushtEnv as draccus writes it:
// EnvConfig's fields, then PushtEnv's, a redeclared field at its base position, features after
// __post_init__ added the camera) reads in and is written back key for key.
TEST(LeRobotRun, PushtEnvSectionParsesAndIsWrittenBackKeyForKey) {
  Json j = fixture("act_train_config.json");
  j["env"] = Json::parse(R"({
    "type": "pusht", "task": "PushT-v0", "fps": 10,
    "features": {"action": {"type": "ACTION", "shape": [2]}, "agent_pos": {"type": "STATE", "shape": [2]},
                 "pixels": {"type": "VISUAL", "shape": [384, 384, 3]}},
    "features_map": {"action": "action", "agent_pos": "observation.state",
                     "environment_state": "observation.environment_state", "pixels": "observation.image"},
    "max_parallel_tasks": 1, "disable_env_checker": true, "episode_length": 300,
    "obs_type": "pixels_agent_pos", "render_mode": "rgb_array", "visualization_width": 384,
    "visualization_height": 384, "observation_height": 384, "observation_width": 384})");
  const fs::path file = write_json(train_scratch() / "pusht_env" / "train_config.json", j);
  TrainPipelineConfig cfg = parse_train_config({"--config_path=" + file.string()});
  ASSERT_TRUE(cfg.env);
  EXPECT_EQ(cfg.env->type(), "pusht");
  EXPECT_EQ(cfg.env->task, "PushT-v0");
  EXPECT_EQ(cfg.env->episode_length, 300);
  EXPECT_EQ(cfg.env->image_size, 96);  // gym_pusht's camera: LeRobot does not pass observation_*
  const fs::path out = train_scratch() / "pusht_env_roundtrip";
  fs::create_directories(out);
  write_train_config(cfg, out);
  EXPECT_EQ(first_difference(Json::parse(read_file(out / "train_config.json")), j), "");
}

TEST(LeRobotRun, KeysThatWouldChangeTheResultAreRefusedByName) {
  const Json base = fixture("act_train_config.json");
  struct Case {
    std::vector<std::string> path;
    Json value;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"peft"}, Json{{"target_modules", nullptr}, {"full_training_modules", nullptr}, {"method_type", "LORA"},
                      {"init_type", nullptr}, {"r", 16}, {"lora_alpha", nullptr}}, "peft"},
      {{"sample_weighting"}, Json{{"type", "rabc"}, {"progress_path", nullptr}, {"head_mode", "sparse"},
                                  {"kappa", 0.01}, {"epsilon", 1e-6}, {"extra_params", Json::object()}},
       "sample_weighting"},
      {{"reward_model"}, Json{{"type", "classifier"}}, "reward_model"},
      {{"job", "target"}, "a10g-small", "job.target"},
      {{"checkpoint_format"}, "dcp", "checkpoint_format"},
      // Pushing checkpoints is done, but like LeRobot it needs the repo (the fixture's is null).
      {{"save_checkpoint_to_hub"}, true, "policy.repo_id"},
      {{"parallelism", "context_parallel", "ring_degree"}, 2, "parallelism.context_parallel"},
      {{"parallelism", "cfg_parallel"}, 2, "parallelism.cfg_parallel"},
      // dp_shard > 1 is sharded data parallel (test_train_sharded.cpp); 0 is refused, as LeRobot's.
      {{"parallelism", "dp_shard"}, 0, "parallelism.dp_shard"},
      {{"accelerator", "fsdp", "min_num_params"}, 0, "accelerator.fsdp.min_num_params"},
      {{"accelerator", "compile", "enabled"}, true, "accelerator.compile.enabled"},
      {{"accelerator", "activation_checkpointing", "mode"}, "selective", "accelerator.activation_checkpointing.mode"},
  };
  for (const auto& c : cases) {
    Json j = base;
    Json* at = &j;
    for (const auto& k : c.path) at = &(*at)[k];
    *at = c.value;
    const fs::path file = write_json(train_scratch() / "refused" / (c.named + ".json"), j);
    try {
      parse_train_config({"--config_path=" + file.string()});
      ADD_FAILURE() << c.named << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.named), std::string::npos) << c.named << ": " << e.what();
    }
  }
  // The same file with the LeRobot defaults is accepted (the refusals are about the values).
  EXPECT_NO_THROW(parse_train_config({"--config_path=" + (kFixtureDir / "act_train_config.json").string()}));
  // From the command line too, with the exit code of a usage error.
  std::string log;
  const fs::path file = train_scratch() / "refused" / "peft.json";
  EXPECT_EQ(run_cli("train --config_path=" + file.string(), &log), 2) << log;
  EXPECT_NE(log.find("peft"), std::string::npos) << log;
  // PEFT itself is implemented (test_lora_train.cpp); this file's ACT has no default LoRA targets
  // and no pretrained path, refused as LeRobot's wrap_with_peft refuses it.
  EXPECT_NE(log.find("does not define default target_modules"), std::string::npos) << log;
}

// A run begun in Python: our trainer makes the step-4 checkpoint, which is then turned into what
// LeRobot 0.6 leaves on disk (its train_config.json, no lerobot_cpp_config.json; the training_state
// files already have LeRobot's names and formats, checked here) and resumed to step 6.
TEST(LeRobotRun, CheckpointInLeRobotLayoutResumesWithTheSchedulerLrAndAdamMoments) {
  const int64_t warmup = 2, decay = 6;
  const double lr = 1e-3, peak_lr = 1e-3, decay_lr = 1e-5;
  const std::vector<std::string> optim = {
      "--use_policy_training_preset=false", "--optimizer.type=adamw", "--optimizer.lr=0.001",
      "--optimizer.weight_decay=0.0001", "--scheduler.type=cosine_decay_with_warmup",
      "--scheduler.num_warmup_steps=2", "--scheduler.num_decay_steps=6", "--scheduler.peak_lr=0.001",
      "--scheduler.decay_lr=0.00001", "--save_freq=4"};
  const fs::path full = train_scratch() / "lerobot_full";
  std::string log;
  ASSERT_EQ(run_cli("train" + join_args(tiny_act_run(full, 6, optim)), &log), 0) << log;

  // The step-4 checkpoint in a run directory of its own, as LeRobot would have left it.
  const fs::path run = train_scratch() / "lerobot_python_run";
  const fs::path ckpt = run / "checkpoints/000004";
  fs::create_directories(run / "checkpoints");
  fs::copy(full / "checkpoints/000004", ckpt, fs::copy_options::recursive);
  fs::create_directory_symlink("000004", run / "checkpoints/last");
  fs::remove(ckpt / "pretrained_model/lerobot_cpp_config.json");

  Json cfg = fixture("act_train_config.json");
  cfg["dataset"]["repo_id"] = "local/reach2d";
  cfg["dataset"]["root"] = reach2d_dataset().string();
  const Json policy_json = Json::parse(read_file(ckpt / "pretrained_model/config.json"));
  Json& p = cfg["policy"];
  p["input_features"] = policy_json["input_features"];
  p["output_features"] = policy_json["output_features"];
  for (const char* k : {"dim_model", "n_heads", "dim_feedforward", "n_encoder_layers", "n_vae_encoder_layers",
                        "chunk_size", "n_action_steps", "pretrained_backbone_weights"})
    p[k] = policy_json[k];
  p["device"] = "cpu";  // the fixture's run was on "cuda"; the run compared with trained on the CPU
  cfg["output_dir"] = run.string();
  cfg["seed"] = 7;
  cfg["batch_size"] = 4;
  cfg["num_workers"] = 0;
  cfg["steps"] = 6;
  cfg["log_freq"] = 1;
  cfg["save_freq"] = 4;
  cfg["use_policy_training_preset"] = false;
  cfg["optimizer"] = {{"type", "adamw"}, {"lr", lr}, {"weight_decay", 1e-4}, {"grad_clip_norm", 10.0},
                      {"betas", {0.9, 0.999}}, {"eps", 1e-8}};
  cfg["scheduler"] = {{"type", "cosine_decay_with_warmup"}, {"num_warmup_steps", warmup}, {"num_decay_steps", decay},
                      {"peak_lr", peak_lr}, {"decay_lr", decay_lr}};
  // Settings that cannot change the result, away from their defaults: reported, not used.
  cfg["dataloader_multiprocessing_context"] = "fork";
  cfg["job"]["tags"] = {"lelab"};
  cfg["accelerator"]["ddp"]["static_graph"] = true;
  write_json(ckpt / "pretrained_model/train_config.json", cfg);

  // training_state/ in LeRobot's formats: torch 2.7's AdamW param-group keys, LambdaLR's state.
  const Json groups = Json::parse(read_file(ckpt / "training_state/optimizer_param_groups.json"));
  // Without the policy's preset LeRobot optimizes policy.parameters() as one group (its ACT preset
  // gives the backbone a group of its own); a Python checkpoint of this run has one group.
  ASSERT_EQ(groups.size(), 1u);
  std::vector<std::string> keys;
  for (auto it = groups[0].begin(); it != groups[0].end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                                            "capturable", "differentiable", "fused", "decoupled_weight_decay",
                                            "initial_lr", "params"}));
  const Json sched = Json::parse(read_file(ckpt / "training_state/scheduler_state.json"));
  EXPECT_EQ(sched["last_epoch"], 4);
  EXPECT_EQ(sched["_step_count"], 5);
  const Json step = Json::parse(read_file(ckpt / "training_state/training_step.json"));
  EXPECT_EQ(step["step"], 4);
  const TensorMap rng = load_safetensors(ckpt / "training_state/rng_state.safetensors");
  for (const char* k : {"py_rng_version", "py_rng_state", "np_rng_state_values", "np_rng_state_index",
                        "np_rng_has_gauss", "np_rng_cached_gaussian", "torch_rng_state"})
    EXPECT_TRUE(rng.count(k)) << k;

  log.clear();
  ASSERT_EQ(run_cli("train --resume=true --config_path=" + (ckpt / "pretrained_model").string(), &log), 0) << log;

  // Continued at step 5 with the lr LeRobot's scheduler gives there, then step 6.
  const auto lines = read_jsonl_rows(run / "train_metrics.jsonl");
  ASSERT_EQ(lines.size(), 2u) << log;
  EXPECT_EQ(lines[0]["step"], 5);
  EXPECT_EQ(lines[1]["step"], 6);
  for (int i = 0; i < 2; ++i) {
    const double expected = lr * cosine_decay_with_warmup(5 + i, warmup, decay, peak_lr, decay_lr);
    EXPECT_NEAR(lines[i]["lr"].get<double>(), expected, expected * 1e-6) << "step " << 5 + i;
  }
  // The saved Adam moments, step counts and RNG carried on: the same weights and moments as the
  // run that never stopped.
  expect_same_tensors(full / "checkpoints/000006/pretrained_model/model.safetensors",
                      run / "checkpoints/000006/pretrained_model/model.safetensors");
  expect_same_tensors(full / "checkpoints/000006/training_state/optimizer_state.safetensors",
                      run / "checkpoints/000006/training_state/optimizer_state.safetensors");
  // ...and the comparison can fail: steps 5 and 6 moved the weights.
  EXPECT_GT(count_different_tensors(ckpt / "pretrained_model/model.safetensors",
                                    run / "checkpoints/000006/pretrained_model/model.safetensors"),
            0);

  // The not-used settings were reported once, by name; those at their defaults were not.
  const std::string needle = "accepted, not used";
  const size_t first = log.find(needle);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(needle, first + 1), std::string::npos) << log;
  const std::string line = log.substr(first, log.find('\n', first) - first);
  for (const char* k : {"dataloader_multiprocessing_context", "job.tags", "accelerator.ddp.static_graph"})
    EXPECT_NE(line.find(k), std::string::npos) << k << " not in: " << line;
  EXPECT_EQ(line.find("accelerator.fsdp"), std::string::npos) << line;

  // The resumed run's train_config.json records where it came from, as LeRobot's does.
  const Json written = Json::parse(read_file(run / "checkpoints/000006/pretrained_model/train_config.json"));
  EXPECT_EQ(written["checkpoint_path"], fs::canonical(ckpt).string());
  EXPECT_EQ(first_difference(key_tree(written), key_tree(cfg)), "");  // and has LeRobot's keys, in order
}

// LeRobot's optim/factory.py: the policy's groups with its preset (ACT: backbone at its own lr),
// one group of every parameter without it. Checked against Python LeRobot 0.6.2: a checkpoint of a
// --use_policy_training_preset=false run holds one group, and resuming it here needs the same.
TEST(LeRobotRun, ParameterGroupsFollowUsePolicyTrainingPreset) {
  auto groups_of = [](const std::string& name, std::vector<std::string> extra) {
    auto s = make_train_setup(parse_train_config(tiny_act_run(train_scratch() / name, 1, std::move(extra))),
                              LaunchEnv{}, std::nullopt);
    int64_t learnable = 0;
    for (const auto& p : s->policy->parameters()) learnable += p.requires_grad();
    std::vector<std::pair<size_t, double>> out;  // (tensors, lr) per group
    size_t total = 0;
    for (const auto& g : s->optimizer->param_groups()) {
      out.emplace_back(g.params().size(), g.options().get_lr());
      total += g.params().size();
    }
    EXPECT_EQ(int64_t(total), learnable) << name;
    return out;
  };
  const auto preset = groups_of("groups_preset", {});
  ASSERT_EQ(preset.size(), 2u);
  EXPECT_DOUBLE_EQ(preset[0].second, 1e-5);  // ACT's preset: optimizer_lr and optimizer_lr_backbone
  EXPECT_DOUBLE_EQ(preset[1].second, 1e-5);
  const auto own = groups_of("groups_own", {"--use_policy_training_preset=false", "--optimizer.type=adamw",
                                            "--optimizer.lr=0.001"});
  ASSERT_EQ(own.size(), 1u);
  EXPECT_DOUBLE_EQ(own[0].second, 1e-3);  // the backbone too trains at --optimizer.lr
  EXPECT_EQ(own[0].first, preset[0].first + preset[1].first);
}
