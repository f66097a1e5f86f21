// Config system: flags -> config -> JSON -> config round trip, precedence, and error messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "lerobot/common/config/flags.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/train/train_config.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const fs::path p = lerobot::testing::process_temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string error_of(const std::vector<std::string>& words) {
  try {
    parse_train_config(words);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

TEST(Config, FlagsSetNestedChoiceAndListFields) {
  auto cfg = parse_train_config({"--policy.type=act", "--policy.chunk_size=20", "--policy.n_action_steps=10",
                                 "--dataset.root=/data/x", "--dataset.episodes=[0, 2, 5]", "--batch_size=16",
                                 "--accelerator.gradient_accumulation.steps=4", "--policy.use_vae=false",
                                 "--optimizer.type=adamw", "--optimizer.betas=[0.8, 0.9]",
                                 "--rename_map={\"a\": \"b\"}"});
  auto* act = cfg.policy.as<ACTConfig>();
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->chunk_size, 20);
  EXPECT_EQ(act->n_action_steps, 10);
  EXPECT_FALSE(act->use_vae);
  EXPECT_EQ(act->dim_model, 512);  // untouched default
  ASSERT_TRUE(cfg.dataset.root.has_value());
  EXPECT_EQ(*cfg.dataset.root, "/data/x");
  EXPECT_EQ(*cfg.dataset.episodes, (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(cfg.batch_size, 16);
  EXPECT_EQ(cfg.accelerator.gradient_accumulation.steps, 4);
  EXPECT_EQ(cfg.optimizer->type(), "adamw");
  EXPECT_EQ(cfg.optimizer.as<AdamWConfig>()->betas, (std::vector<double>{0.8, 0.9}));
  EXPECT_DOUBLE_EQ(cfg.optimizer->weight_decay, 1e-2);  // adamw's own default
  EXPECT_EQ(cfg.rename_map.at("a"), "b");
}

TEST(Config, RoundTripThroughJsonDumpIsIdentical) {
  auto cfg = parse_train_config({"--policy.type=act", "--policy.chunk_size=33", "--dataset.root=/tmp/d",
                                 "--dataset.episodes=[1,3]", "--seed=7", "--policy.temporal_ensemble_coeff=0.01",
                                 "--policy.n_action_steps=1", "--env.type=reach2d", "--scheduler.type=diffuser",
                                 "--scheduler.num_warmup_steps=12", "--output_dir=out/x", "--log_freq=5"});
  const Json dumped = to_json(cfg);
  const std::string path = temp_file("train_config.json", dump_pretty(dumped));
  auto loaded = parse_train_config({"--config_path=" + path});
  EXPECT_EQ(dump_pretty(to_json(loaded)), dump_pretty(dumped));
  EXPECT_EQ(loaded.policy.as<ACTConfig>()->chunk_size, 33);
  EXPECT_DOUBLE_EQ(*loaded.policy.as<ACTConfig>()->temporal_ensemble_coeff, 0.01);
  EXPECT_EQ(loaded.scheduler->num_warmup_steps, 12);
  EXPECT_EQ(*loaded.seed, 7);
  // A changed value must show up in the dump (the comparison above is not vacuous).
  loaded.policy.as<ACTConfig>()->chunk_size = 34;
  EXPECT_NE(dump_pretty(to_json(loaded)), dump_pretty(dumped));
}

TEST(Config, DumpUsesLeRobotFieldNamesAndTypeFirst) {
  auto cfg = parse_train_config({"--policy.type=act"});
  const Json j = to_json(cfg);
  for (const char* key : {"dataset", "env", "policy", "output_dir", "job_name", "resume", "seed", "num_workers",
                          "batch_size", "steps", "env_eval_freq", "log_freq", "save_checkpoint", "save_freq",
                          "use_policy_training_preset", "optimizer", "scheduler", "eval", "wandb"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["policy"].begin().key(), "type");
  EXPECT_EQ(j["policy"]["type"], "act");
  EXPECT_EQ(j["policy"]["kl_weight"], 10.0);
  EXPECT_TRUE(j["env"].is_null());
  EXPECT_TRUE(j["policy"].contains("private"));
}

TEST(Config, FileThenFlagsPrecedence) {
  const std::string yaml = temp_file("cfg.yaml",
                                     "batch_size: 4\n"
                                     "steps: 50\n"
                                     "policy:\n"
                                     "  type: act\n"
                                     "  chunk_size: 10\n"
                                     "  n_action_steps: 10\n"
                                     "dataset:\n"
                                     "  root: /from/file\n");
  auto cfg = parse_train_config({"--config_path=" + yaml, "--batch_size=12", "--policy.n_action_steps=5"});
  EXPECT_EQ(cfg.batch_size, 12);                              // flag wins
  EXPECT_EQ(cfg.steps, 50);                                   // file value kept
  EXPECT_EQ(cfg.policy.as<ACTConfig>()->chunk_size, 10);      // file value kept
  EXPECT_EQ(cfg.policy.as<ACTConfig>()->n_action_steps, 5);   // flag wins
  EXPECT_EQ(*cfg.dataset.root, "/from/file");
  // The order of words on the command line does not change precedence.
  auto cfg2 = parse_train_config({"--batch_size=12", "--config_path=" + yaml});
  EXPECT_EQ(cfg2.batch_size, 12);
}

TEST(Config, JsonFileWorksToo) {
  const std::string json = temp_file("cfg.json", R"({"steps": 9, "policy": {"type": "act", "dim_model": 64}})");
  auto cfg = parse_train_config({"--config_path=" + json});
  EXPECT_EQ(cfg.steps, 9);
  EXPECT_EQ(cfg.policy.as<ACTConfig>()->dim_model, 64);
}

TEST(Config, UnknownFlagNamesItAndSuggestsNearest) {
  const std::string msg = error_of({"--policy.type=act", "--policy.chunck_size=5"});
  EXPECT_NE(msg.find("--policy.chunck_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("policy.chunk_size"), std::string::npos) << msg;
  const std::string msg2 = error_of({"--bach_size=5"});
  EXPECT_NE(msg2.find("--bach_size"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("did you mean '--batch_size'"), std::string::npos) << msg2;
}

TEST(Config, UnknownKeyInFileNamesIt) {
  const std::string yaml = temp_file("bad.yaml", "dataset:\n  rot: /x\n");
  const std::string msg = error_of({"--config_path=" + yaml});
  EXPECT_NE(msg.find("dataset.rot"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dataset.root"), std::string::npos) << msg;
}

TEST(Config, BadValuesNameTheKey) {
  std::string msg = error_of({"--batch_size=eight"});
  EXPECT_NE(msg.find("batch_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
  msg = error_of({"--policy.type=act", "--policy.use_vae=maybe"});
  EXPECT_NE(msg.find("policy.use_vae"), std::string::npos) << msg;
  msg = error_of({"--dataset.episodes=[1, x]"});
  EXPECT_NE(msg.find("dataset.episodes"), std::string::npos) << msg;
  msg = error_of({"--policy.type=actt"});
  EXPECT_NE(msg.find("actt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'act'"), std::string::npos) << msg;
  msg = error_of({"--accelerator.mixed_precision=fp8"});
  EXPECT_NE(msg.find("accelerator.mixed_precision"), std::string::npos) << msg;
  msg = error_of({"--policy.chunk_size=3"});  // no type chosen yet
  EXPECT_NE(msg.find("--policy.type"), std::string::npos) << msg;
}

TEST(Config, ValidationRunsAfterFlags) {
  const std::string msg = error_of({"--policy.type=act", "--policy.chunk_size=5", "--policy.n_action_steps=6"});
  EXPECT_NE(msg.find("n_action_steps"), std::string::npos) << msg;
}

TEST(Config, AccelerateEnvFillsMixedPrecisionUnlessFlagGiven) {
  ::setenv("ACCELERATE_MIXED_PRECISION", "bf16", 1);
  EXPECT_EQ(parse_train_config({}).accelerator.mixed_precision, "bf16");
  EXPECT_EQ(parse_train_config({"--accelerator.mixed_precision=fp16"}).accelerator.mixed_precision, "fp16");
  ::unsetenv("ACCELERATE_MIXED_PRECISION");
  EXPECT_EQ(parse_train_config({}).accelerator.mixed_precision, "no");
}

TEST(Config, SpaceSeparatedValuesAndDashes) {
  auto cfg = parse_train_config({"--batch_size", "3", "--policy.type", "act", "--log-freq=9"});
  EXPECT_EQ(cfg.batch_size, 3);
  EXPECT_EQ(cfg.log_freq, 9);
}

TEST(Config, HelpListsEveryFlagWithDefault) {
  register_all_configs();
  TrainPipelineConfig cfg;
  std::ostringstream os;
  print_help(cfg, os);
  const std::string help = os.str();
  for (const char* flag : {"--batch_size=<int>", "--dataset.root=", "--policy.chunk_size=<int>", "--policy.kl_weight",
                           "--optimizer.betas", "--accelerator.gradient_accumulation.steps", "--scheduler.num_warmup_steps",
                           "--env.type={push2d,pusht,reach2d}"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.find("(default: 8)"), std::string::npos);
  // Every reachable flag of a fully chosen config appears in the help text.
  auto full = parse_train_config({"--policy.type=act", "--optimizer.type=sgd", "--scheduler.type=diffuser",
                                  "--env.type=push2d"});
  for (const auto& p : flag_paths(full)) EXPECT_NE(help.find("--" + p), std::string::npos) << p;
}


// train_config.json must stay parseable by LeRobot's draccus, which refuses unknown keys: our own
// settings go to lerobot_cpp_config.json beside it, and --config_path reads both back.
TEST(Config, CheckpointTrainConfigHoldsOnlyLeRobotKeysAndExtensionsComeBack) {
  auto cfg = parse_train_config({"--policy.type=act", "--dataset.root=/tmp/d", "--distributed.bucket_mb=4",
                                 "--max_nonfinite_steps=3", "--accelerator.loss_scale_init=1024",
                                 "--accelerator.mixed_precision=bf16", "--batch_size=5",
                                 "--env.type=push2d", "--env.image_size=64"});
  std::string tmpl = (lerobot::testing::process_temp_dir() / "cfg_split_XXXXXX").string();
  const fs::path dir = mkdtemp(tmpl.data());
  write_train_config(cfg, dir);
  const Json lerobot = Json::parse(read_file(dir / "train_config.json"));
  // LeRobot's TrainPipelineConfig fields (configs/train.py, see shared/reference/lerobot-format.md).
  const std::set<std::string> known = {
      "dataset", "env", "policy", "reward_model", "output_dir", "job_name", "resume", "seed",
      "cudnn_deterministic", "num_workers", "batch_size", "prefetch_factor", "persistent_workers",
      "dataloader_multiprocessing_context", "steps", "env_eval_freq", "log_freq", "eval_steps",
      "max_eval_samples", "tolerance_s", "save_checkpoint", "save_freq", "checkpoint_format",
      "use_policy_training_preset", "optimizer", "scheduler", "parallelism", "accelerator", "eval", "ema",
      "wandb", "peft", "job", "sample_weighting", "rename_map", "save_checkpoint_to_hub",
      "checkpoint_path"};  // an init=False field: draccus encodes it and sets it back on decode
  for (auto it = lerobot.begin(); it != lerobot.end(); ++it)
    EXPECT_TRUE(known.count(it.key())) << "train_config.json has a key LeRobot does not know: " << it.key();
  EXPECT_FALSE(lerobot["accelerator"].contains("loss_scale_init"));
  EXPECT_EQ(lerobot["accelerator"]["mixed_precision"], "bf16");
  EXPECT_EQ(lerobot["batch_size"], 5);
  // push2d is ours: LeRobot's draccus has no such env class, so the env waits in the extension file.
  EXPECT_TRUE(lerobot.contains("env") && lerobot["env"].is_null()) << lerobot["env"].dump();
  const Json extensions = Json::parse(read_file(dir / kExtensionConfigFile));
  EXPECT_EQ(extensions["env"]["type"], "push2d");

  auto loaded = parse_train_config({"--config_path=" + dir.string()});
  EXPECT_DOUBLE_EQ(loaded.distributed.bucket_mb, 4.0);
  EXPECT_EQ(loaded.max_nonfinite_steps, 3);
  EXPECT_DOUBLE_EQ(loaded.accelerator.loss_scale_init, 1024.0);
  EXPECT_EQ(loaded.batch_size, 5);
  ASSERT_TRUE(loaded.env);
  EXPECT_EQ(loaded.env->type(), "push2d");
  EXPECT_EQ(loaded.env->image_size, 64);
  EXPECT_EQ(dump_pretty(to_json(loaded)), dump_pretty(to_json(cfg)));
  fs::remove_all(dir);
}

// pusht is LeRobot's env type: train_config.json carries it with exactly LeRobot's PushtEnv keys,
// in its dataclass order (envs/configs.py: EnvConfig's fields, then PushtEnv's), and our camera
// size travels in the extension file.
TEST(Config, PushtEnvIsWrittenWithLeRobotsKeysAndOursBeside) {
  auto cfg = parse_train_config({"--policy.type=diffusion", "--dataset.root=/tmp/d", "--env.type=pusht",
                                 "--env.image_size=64", "--env.episode_length=200"});
  std::string tmpl = (lerobot::testing::process_temp_dir() / "cfg_pusht_XXXXXX").string();
  const fs::path dir = mkdtemp(tmpl.data());
  write_train_config(cfg, dir);
  const Json env = Json::parse(read_file(dir / "train_config.json"))["env"];
  std::vector<std::string> keys;
  for (auto it = env.begin(); it != env.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"type", "task", "fps", "features", "features_map", "max_parallel_tasks",
                                            "disable_env_checker", "episode_length", "obs_type", "render_mode",
                                            "visualization_width", "visualization_height", "observation_height",
                                            "observation_width"}));
  EXPECT_EQ(env["task"], "PushT-v0");
  EXPECT_EQ(env["episode_length"], 200);
  EXPECT_EQ(env["features"]["pixels"]["shape"], Json::parse("[384, 384, 3]"));
  EXPECT_EQ(env["features_map"]["pixels"], "observation.image");
  const Json extensions = Json::parse(read_file(dir / kExtensionConfigFile));
  EXPECT_EQ(extensions["env"], Json::parse(R"({"image_size": 64})"));

  auto loaded = parse_train_config({"--config_path=" + dir.string()});
  ASSERT_TRUE(loaded.env);
  EXPECT_EQ(loaded.env->type(), "pusht");
  EXPECT_EQ(loaded.env->image_size, 64);
  EXPECT_EQ(loaded.env->episode_length, 200);
  EXPECT_EQ(dump_pretty(to_json(loaded)), dump_pretty(to_json(cfg)));
  fs::remove_all(dir);
  // An observation the port lacks is refused with the flags, before a run starts.
  try {
    parse_train_config({"--policy.type=diffusion", "--dataset.root=/tmp/d", "--env.type=pusht", "--env.obs_type=state"});
    ADD_FAILURE() << "--env.obs_type=state was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--env.obs_type") << e.what();
  }
}

}  // namespace
}  // namespace lerobot
