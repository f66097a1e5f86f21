// The flag walk: every flag that `lerobot-cpp train --help`, `eval --help` and `dataset generate
// --help` list must be read by code that command runs, through the struct that declares it, or be
// listed with its reason (accepted_unused_train_flags(), accepted_unused_eval_flags(),
// accepted_unused_env_flags() in src/lerobot/train/unused_flags.cpp); every flag of the
// hand-written usages of `infer` and `dataset` must be looked up by its key in that command's file
// (flags["key"], flags.count("key"), flag_true(a, "key")), and train's launcher flags (above its
// "flags:" line) read from the LauncherFlags member of their name. A new flag that nothing reads
// fails here until it is used, refused or listed.
//
// The rule (flag_walk_helpers.cpp applies it to the source text, comments and literals removed):
// 1. Owner. `--a.b.c` is resolved from the command's root config (TrainPipelineConfig,
//    EvalPipelineConfig, GenerateConfig) part by part through the field() declarations: `a` is a
//    field() of the root (or of a base), declared on a member whose type is the next struct; a
//    ChoicePtr<Base> member takes the type --help lists the flag under ("options of
//    --policy.type=act:" -> the struct registered as "act"). The flag is then (owner, member): the
//    struct whose visit() declares `c` and the member its field() names.
// 2. Read. That member counts as read only
//    - through an expression of the owner's type or of a type deriving from it: `x.member` or
//      `x->member`, x's type taken from its declaration in the same function (parameters included,
//      `auto` from its initializer), else from a member of the function's struct, else from a
//      declaration in the file or its .h/.cpp pair, and along access chains member by member
//      (`cfg.dataset.return_uint8`: cfg is a TrainPipelineConfig, its `dataset` a DatasetConfig;
//      as<T>() and casts give T, a ChoicePtr<T> member gives T);
//    - or by its bare name inside a member function of the owner (or of a struct deriving from it);
//    never in visit() or validate() bodies (declaring and checking a value is not using it), in
//    the field() declaration, as the name of a declared local, as a plain assignment's target
//    (`x.member = v` writes) or as a call (`member(...)`).
//    A name declared nowhere the lookup looks may have the type of any struct member of that name,
//    and one declared with a template parameter's type any type (parse gaps err towards accepting).
//    A flag is also read when code looks it up by its whole name before the config is parsed: a
//    "--a.b.c" literal passed to a *flag* function (flag_value(args, "--policy.pretrained_revision")).
// 3. Command. The read must be in code the command runs: files under src/lerobot/train/ are
//    train's, apps/lerobot-cpp/<command>.cpp and <command>_*.cpp that command's, all other files
//    shared library code. So eval's read of the shared PolicyConfig::use_amp does not make train's
//    --policy.use_amp used.
// A member of the same name in another struct (LeRobotDataset's options_.return_uint8) or in
// another command's code thus no longer satisfies a flag: FlagWalk.FailsOnAFlagReadOnlyElsewhere.
// The listed flags are reported once in the run's log (the last test).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "flag_walk_helpers.h"
#include "lerobot/train/unused_flags.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;
namespace fw = lerobot::testing::flag_walk;

namespace {

const fw::SourceModel& sources() {
  static const fw::SourceModel model(fw::read_source_tree(LEROBOT_SOURCE_DIR));
  return model;
}

std::string help_of(const std::string& command) {
  std::string out;
  EXPECT_EQ(run_cli(command + " --help", &out), 0) << out;
  return out;
}

std::map<std::string, std::string> listed(const std::vector<UnusedFlag>& flags) {
  std::map<std::string, std::string> out;
  for (const auto& u : flags) {
    EXPECT_TRUE(out.emplace(u.key, u.reason).second) << "listed twice: " << u.key;
    EXPECT_GT(std::string(u.reason).size(), 10u) << u.key << " needs a reason";
  }
  return out;
}

// One failure naming every flag of `findings` that did not resolve, or that nothing reads and
// `unused` does not list; and one for each listed key that is not a flag of the walk.
void expect_read_or_listed(const std::string& command, const std::vector<fw::Finding>& findings,
                           const std::map<std::string, std::string>& unused = {}) {
  std::string problems;
  std::set<std::string> keys;
  for (const auto& f : findings) {
    keys.insert(f.key);
    const std::string owner = f.owner.empty() ? "" : " (" + f.owner + "::" + f.member + ")";
    if (!f.problem.empty())
      problems += "\n  --" + f.key + ": " + f.problem;
    else if (f.read_at.empty() && !unused.count(f.key))
      problems += "\n  --" + f.key + owner + " is parsed but nothing " + command +
                  " runs reads it: use it, refuse it, or list it as accepted but not used, with a reason";
  }
  if (!problems.empty()) ADD_FAILURE() << "lerobot-cpp " << command << ":" << problems;
  for (const auto& [key, reason] : unused)
    EXPECT_TRUE(keys.count(key)) << "listed as not used but not a flag of " << command << ": " << key;
}

std::string read_at(const std::string& owner, const std::string& member, const std::string& command) {
  return sources().read_at(owner, member, command);
}

// The lines of `help` from the one starting with `from` up to the one that is `to`.
std::string section(const std::string& help, const std::string& from, const std::string& to) {
  std::istringstream in(help);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(from, 0) == 0) inside = true;
    else if (line == to) inside = false;
    if (inside) out += line + "\n";
  }
  return out;
}

}  // namespace

TEST(FlagWalk, ResolvesTheStructThatDeclaresAFlag) {
  const fw::SourceModel& m = sources();
  auto owner = [&](const std::string& key, const std::string& root, std::map<std::string, std::string> choices = {}) {
    const fw::Finding f = m.resolve({key, choices}, root);
    return f.problem.empty() ? f.owner + "::" + f.member : "problem: " + f.problem;
  };
  EXPECT_EQ(owner("dataset.return_uint8", "TrainPipelineConfig"), "DatasetConfig::return_uint8");
  EXPECT_EQ(owner("eval.use_async_envs", "TrainPipelineConfig"), "EvalConfig::use_async_envs");
  EXPECT_EQ(owner("eval.use_async_envs", "EvalPipelineConfig"), "EvalRunConfig::use_async_envs");
  EXPECT_EQ(owner("checkpoint_path", "TrainPipelineConfig"), "TrainPipelineConfig::resumed_from");
  EXPECT_EQ(owner("policy.chunk_size", "TrainPipelineConfig", {{"policy", "act"}}), "ACTConfig::chunk_size");
  EXPECT_EQ(owner("policy.use_amp", "TrainPipelineConfig", {{"policy", "act"}}), "PolicyConfig::use_amp");
  EXPECT_EQ(owner("dataset.video", "GenerateConfig"), "GenerateDatasetFlags::video");
  EXPECT_EQ(owner("accelerator.gradient_accumulation.steps", "TrainPipelineConfig"), "GradientAccumulationConfig::steps");
  EXPECT_NE(owner("policy.chunk_size", "TrainPipelineConfig").find("problem: "), std::string::npos);  // no type
  EXPECT_NE(owner("dataset.no_such_field", "TrainPipelineConfig").find("problem: "), std::string::npos);
}

TEST(FlagWalk, SeesReadsThroughTheOwnerOnly) {
  // Read through the owner: batch_size (cfg.batch_size), eval_split (cfg.dataset.eval_split).
  EXPECT_NE(read_at("TrainPipelineConfig", "batch_size", "train"), "");
  EXPECT_NE(read_at("DatasetConfig", "eval_split", "train"), "");
  EXPECT_NE(read_at("ACTConfig", "chunk_size", "train"), "");
  EXPECT_NE(read_at("EvalRunConfig", "use_async_envs", "eval"), "");
  // Declared and validated but not otherwise used: unread.
  EXPECT_EQ(read_at("TrainPipelineConfig", "persistent_workers", "train"), "");
  // A same-named member of another struct (LeRobotDataset::Options::return_uint8) is no read of
  // DatasetConfig::return_uint8; eval's read of PolicyConfig::use_amp is none of train's.
  EXPECT_EQ(read_at("DatasetConfig", "return_uint8", "train"), "");
  EXPECT_EQ(read_at("PolicyConfig", "use_amp", "train"), "");
  EXPECT_NE(read_at("PolicyConfig", "use_amp", "eval"), "");
  EXPECT_EQ(read_at("TrainPipelineConfig", "lerobot_flag_walk_no_such_field", "train"), "");
}

// The planted defects: a flag whose member is read only through a same-named member of another
// struct, and one read only by another command, each make the walk fail; read through its owner,
// it passes.
TEST(FlagWalk, FailsOnAFlagReadOnlyElsewhere) {
  std::vector<fw::SourceFile> tree = {
      {"src/lerobot/demo/demo_config.h", R"(
struct DemoDatasetConfig : Config {
  std::string root;
  bool return_uint8 = false;
  void visit(FieldVisitor& v) override {
    field(v, "root", root, "dataset directory");
    field(v, "return_uint8", return_uint8, "frames as uint8");
  }
  void validate() const override { if (return_uint8 && root.empty()) throw_usage("no root", "--dataset.root"); }
};
struct DemoEvalConfig : Config {
  bool use_async = true;
  void visit(FieldVisitor& v) override { field(v, "use_async", use_async, "env threads"); }
};
struct DemoTrainConfig : Config {
  DemoDatasetConfig dataset;
  DemoEvalConfig eval;
  void visit(FieldVisitor& v) override;
};
)"},
      {"src/lerobot/demo/demo_config.cpp", R"(
void DemoTrainConfig::visit(FieldVisitor& v) {
  field(v, "dataset", dataset, "the dataset");
  field(v, "eval", eval, "evaluation");
}
)"},
      {"src/lerobot/demo/loader.cpp", R"(
struct LoaderOptions {
  bool return_uint8 = false;  // the loader's own option, of the same name
};
torch::Tensor load(const DemoTrainConfig& cfg, const LoaderOptions& options_) {
  torch::Tensor frames = read_frames(cfg.dataset.root);
  if (!options_.return_uint8) frames = frames.to(torch::kFloat32);
  return frames;
}
)"},
      {"apps/lerobot-cpp/eval.cpp", R"(
int eval_main(const DemoTrainConfig& cfg) { return cfg.eval.use_async ? 4 : 1; }
)"},
  };
  const std::string help =
      "  --config_path=<path>     a config file\n"
      "  --dataset.root=<str>     dataset directory (default: \"\")\n"
      "  --dataset.return_uint8=<bool> frames as uint8 (default: false)\n"
      "  --eval.use_async=<bool>  env threads (default: true)\n";
  auto walk_fails_with = [&](const std::vector<std::string>& needles, const std::vector<std::string>& absent) {
    const fw::SourceModel model(tree);
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      expect_read_or_listed("train", model.walk_config_flags(help, "DemoTrainConfig", "train"));
    }
    if (needles.empty()) {
      EXPECT_EQ(failures.size(), 0) << (failures.size() ? failures.GetTestPartResult(0).message() : "");
      return;
    }
    ASSERT_EQ(failures.size(), 1);
    const std::string message = failures.GetTestPartResult(0).message();
    std::cout << "[planted] the walk fails:\n" << message << "\n";
    for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << message;
    for (const auto& a : absent) EXPECT_EQ(message.find(a), std::string::npos) << message;
  };
  // Both planted: return_uint8 is read only as LoaderOptions', use_async only by the eval command.
  walk_fails_with({"--dataset.return_uint8 (DemoDatasetConfig::return_uint8) is parsed but nothing train runs reads it",
                   "--eval.use_async (DemoEvalConfig::use_async) is parsed but nothing train runs reads it"},
                  {"--dataset.root"});
  // The same planted flag, through the real walk's checks: it fails.
  {
    const fw::SourceModel model(tree);
    EXPECT_NONFATAL_FAILURE(expect_read_or_listed("train", model.walk_config_flags(help, "DemoTrainConfig", "train")),
                            "--dataset.return_uint8 (DemoDatasetConfig::return_uint8) is parsed but nothing");
  }
  // Read through the owner (an alias of cfg.dataset; train's own code), both pass.
  tree.push_back({"src/lerobot/train/demo_train.cpp", R"(
void train(const DemoTrainConfig& cfg) {
  const auto& ds = cfg.dataset;
  LoaderOptions o;
  o.return_uint8 = ds.return_uint8;
  run_eval(cfg.eval.use_async);
}
)"});
  walk_fails_with({}, {});
  // A write is no read: only the assignment left, return_uint8 fails again.
  tree.back().text = "void train(DemoTrainConfig& cfg) { cfg.dataset.return_uint8 = true; run_eval(cfg.eval.use_async); }";
  walk_fails_with({"--dataset.return_uint8"}, {"--eval.use_async"});
  // Listed as accepted but not used, it passes.
  const fw::SourceModel model(tree);
  expect_read_or_listed("train", model.walk_config_flags(help, "DemoTrainConfig", "train"),
                        {{"dataset.return_uint8", "frames are converted by the trainer anyway"}});
}

TEST(FlagWalk, FailsOnANamedFlagNobodyLooksUp) {
  const std::vector<fw::SourceFile> tree = {{"apps/lerobot-cpp/infer.cpp", R"(
int infer_main(Args args) {
  auto flags = take_named_flags(args, {"policy.path", "frobnicate"});
  return run(flags["policy.path"]);
}
)"}};
  const fw::SourceModel model(tree);
  const auto findings =
      model.walk_named_flags("usage: lerobot-cpp infer --policy.path=DIR [--frobnicate=N] [--flag=value ...]\n",
                             "apps/lerobot-cpp/infer.cpp");
  ASSERT_EQ(findings.size(), 2u);  // --flag is the usage's placeholder
  EXPECT_EQ(findings[0].key, "policy.path");
  EXPECT_NE(findings[0].read_at, "");
  EXPECT_EQ(findings[1].key, "frobnicate");
  EXPECT_EQ(findings[1].read_at, "");  // accepted, never looked up
  EXPECT_NONFATAL_FAILURE(expect_read_or_listed("infer", findings), "--frobnicate is parsed but nothing infer runs reads it");
}

TEST(FlagWalk, EveryTrainFlagIsReadOrListedAsNotUsed) {
  const std::string help = help_of("train");
  auto findings = sources().walk_config_flags(help, "TrainPipelineConfig", "train");
  ASSERT_GT(findings.size(), 100u);  // every choice type's options are listed
  // The launcher flags, taken by name into LauncherFlags (apps/lerobot-cpp/train.cpp).
  const auto launcher = fw::config_flags_of_help(section(help, "launcher flags", "flags:"));
  EXPECT_EQ(launcher.size(), 5u) << help;
  for (const auto& f : launcher)
    findings.push_back({f.key, "LauncherFlags", f.key, read_at("LauncherFlags", f.key, "train"), ""});
  expect_read_or_listed("train", findings, listed(accepted_unused_train_flags()));
}

TEST(FlagWalk, EveryEvalFlagIsReadOrListedAsNotUsed) {
  const auto findings = sources().walk_config_flags(help_of("eval"), "EvalPipelineConfig", "eval");
  ASSERT_GT(findings.size(), 50u);
  expect_read_or_listed("eval", findings, listed(accepted_unused_eval_flags()));
}

TEST(FlagWalk, EveryDatasetGenerateFlagIsReadOrListedAsNotUsed) {
  const auto findings = sources().walk_config_flags(help_of("dataset generate"), "GenerateConfig", "dataset");
  ASSERT_GE(findings.size(), 5u);
  expect_read_or_listed("dataset generate", findings, listed(accepted_unused_env_flags()));
}

TEST(FlagWalk, EveryInferAndDatasetFlagIsLookedUp) {
  const auto infer = sources().walk_named_flags(help_of("infer"), "apps/lerobot-cpp/infer.cpp");
  EXPECT_GE(infer.size(), 11u);
  expect_read_or_listed("infer", infer);
  // `dataset recompute-stats` reads its flags in its own file; `dataset`'s help lists them too.
  const auto recompute =
      sources().walk_named_flags(help_of("dataset recompute-stats"), "apps/lerobot-cpp/dataset_recompute_stats.cpp");
  EXPECT_GE(recompute.size(), 5u);
  expect_read_or_listed("dataset recompute-stats", recompute);
  std::set<std::string> recompute_keys;
  for (const auto& f : recompute) recompute_keys.insert(f.key);
  std::vector<fw::Finding> dataset;
  for (const auto& f : sources().walk_named_flags(help_of("dataset"), "apps/lerobot-cpp/dataset.cpp"))
    if (!recompute_keys.count(f.key)) dataset.push_back(f);
  EXPECT_GE(dataset.size(), 2u);
  expect_read_or_listed("dataset", dataset);
}

TEST(FlagWalk, NotUsedFlagsAreReportedOnceInTheLog) {
  const fs::path out = train_scratch() / "flag_walk_run";
  std::string log;
  const int rc = run_cli("train" + join_args(tiny_act_run(out, 1, {"--persistent_workers=false", "--dataset.video_backend=pyav"})), &log);
  ASSERT_EQ(rc, 0) << log;
  const std::string needle = "accepted, not used";
  const size_t first = log.find(needle);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(needle, first + 1), std::string::npos) << "reported more than once:\n" << log;
  const std::string line = log.substr(first, log.find('\n', first) - first);
  EXPECT_NE(line.find("--persistent_workers"), std::string::npos) << line;
  EXPECT_NE(line.find("--dataset.video_backend"), std::string::npos) << line;
  EXPECT_EQ(line.find("--batch_size"), std::string::npos) << line;  // read: not reported

  // eval reports its own list; a PEFT adapter is refused by name.
  const std::string policy = (out / "checkpoints/last/pretrained_model").string();
  const std::string eval = "eval --policy.path=" + policy + " --env.type=reach2d --eval.n_episodes=1 --eval.max_videos=0";
  ASSERT_EQ(run_cli(eval + " --trust_remote_code=true --output_dir=" + (out / "eval").string(), &log), 0) << log;
  const size_t at = log.find(needle);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("--trust_remote_code", at), std::string::npos) << log;
  EXPECT_NE(run_cli(eval + " --policy.use_peft=true", &log), 0) << log;
  EXPECT_NE(log.find("--policy.use_peft"), std::string::npos) << log;
}

namespace lerobot {
namespace {

// A listed flag that one policy type reads is reported only for the types it does nothing for.
TEST(FlagWalk, AFlagOnePolicyReadsIsReportedOnlyForTheOthers) {
  const std::vector<std::string> given = {"policy.memory_temporal_attention_every"};
  EXPECT_EQ(unused_flags_message(given, {}, "", "pi0"), "");
  EXPECT_EQ(unused_flags_message(given, {}, "", "diffusion"), "");
  EXPECT_NE(unused_flags_message(given, {}, "", "pi05").find("MEM"), std::string::npos);
  // Read by every policy that has it (Diffusion recomputes its U-Net blocks, π its layers).
  for (const char* type : {"diffusion", "pi0", "pi05"})
    EXPECT_EQ(unused_flags_message({"policy.gradient_checkpointing"}, {}, "", type), "") << type;
}

}  // namespace
}  // namespace lerobot
