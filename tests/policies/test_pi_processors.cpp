// π0/π0.5 pre/post-processor pipelines against LeRobot 0.6.2 itself
// (scripts/python_lerobot/pi_processors_reference.py, run on LeRobot in the Debian 13 chroot:
// tests/policies/data/pi_processors_reference.json). For the script's config and stats: the
// files we save are the files LeRobot saves (step names, order, configs, state-file names and
// tensors), the files LeRobot saved load here and preprocess the raw batch as LeRobot did
// (tokens, masks, normalized values) and our own files round-trip. Relative actions on:
// test_pi_relative_actions.cpp.
// "google/paligemma-3b-pt-224" resolves to tests/policies/data/gemma_tokenizer on both sides.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <set>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/model_folder.h"
#include "lerobot/policies/observation_inputs.h"
#include "lerobot/policies/padded_inputs.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/processor_io.h"
#include "pi_processor_fixtures.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

using testing::make_temp_dir;

const fs::path kData = testing::pi_processor_data();

const Json& reference() {
  static const Json j = Json::parse(read_file(kData / "pi_processors_reference.json"));
  return j;
}

using testing::PaliGemmaTokenizerResolver;
using testing::pi_processor_stats;
using testing::reference_tensor;

// The script's config; "pi05_wide_state" is π0.5 with max_state_dim 3.
std::unique_ptr<PiConfigBase> make_config(const std::string& type) {
  auto c = testing::pi_processor_config(type == "pi0", reference().at(type).at("tokenizer_max_length").get<int64_t>());
  c->max_state_dim = reference().at(type).at("max_state_dim").get<int64_t>();
  return c;
}

Batch raw_batch(const Json& r, std::vector<std::string>& tasks) {
  Batch b;
  for (auto it = r.at("batch").begin(); it != r.at("batch").end(); ++it) {
    if (it.key() == "task") tasks = it.value().get<std::vector<std::string>>();
    else b[it.key()] = reference_tensor(it.value());
  }
  return b;
}

// Tokens and masks exactly, the normalized tensors to float32 rounding.
void expect_preprocessed(const Batch& out, const Json& expected, const std::string& what) {
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    SCOPED_TRACE(what + ": " + it.key());
    ASSERT_TRUE(out.count(it.key()));
    const torch::Tensor e = reference_tensor(it.value());
    torch::Tensor a = out.at(it.key()).cpu();
    ASSERT_EQ(a.sizes(), e.sizes());
    if (e.scalar_type() == torch::kInt64) {
      EXPECT_TRUE(torch::equal(a.to(torch::kInt64), e)) << a << "\nexpected\n" << e;
    } else {
      EXPECT_TRUE(torch::allclose(a.to(torch::kFloat32), e, 1e-5, 1e-6)) << a << "\nexpected\n" << e;
    }
  }
}

// JSON compared as Python compares dicts (key order aside).
nlohmann::json plain(const Json& j) { return nlohmann::json::parse(j.dump()); }

void expect_same_pipeline(const Json& ours, const Json& lerobot, const std::string& what) {
  ASSERT_EQ(ours.at("name"), lerobot.at("name")) << what;
  const Json& a = ours.at("steps");
  const Json& e = lerobot.at("steps");
  std::vector<std::string> an, en;
  for (const auto& s : a) an.push_back(s.at("registry_name").get<std::string>());
  for (const auto& s : e) en.push_back(s.at("registry_name").get<std::string>());
  ASSERT_EQ(an, en) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(plain(a[i]), plain(e[i])) << what << " step " << i << " (" << en[i] << ")";
}

std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), dir).generic_string());
  return files;
}

// LeRobot's saved folder, rebuilt from the reference: its two JSON files as written, its state
// files from the recorded tensors, the tokenizer files it copied (those of gemma_tokenizer/).
fs::path lerobot_folder(const Json& r, const std::string& tag) {
  const fs::path dir = make_temp_dir("pi_processors_lerobot_" + tag);
  write_file_atomic(dir / "policy_preprocessor.json", r.at("preprocessor").dump(2));
  write_file_atomic(dir / "policy_postprocessor.json", r.at("postprocessor").dump(2));
  for (auto f = r.at("state_tensors").begin(); f != r.at("state_tensors").end(); ++f) {
    TensorMap m;
    for (auto t = f.value().begin(); t != f.value().end(); ++t) m[t.key()] = reference_tensor(t.value());
    save_safetensors(dir / f.key(), m, {});
  }
  for (const auto& f : r.at("files")) {
    const std::string name = f.get<std::string>();
    if (name.rfind("tokenizer/", 0) == 0) {
      fs::create_directories(dir / "tokenizer");
      write_file_atomic(dir / name, read_file(kData / "gemma_tokenizer" / name.substr(10)));
    }
  }
  return dir;
}

class PiProcessors : public ::testing::TestWithParam<std::string> {};

TEST_P(PiProcessors, SavedFilesAreLeRobots) {
  PaliGemmaTokenizerResolver resolver;
  const Json& r = reference().at(GetParam());
  auto cfg = make_config(GetParam());
  const PolicyProcessors p = make_policy_processors(*cfg, pi_processor_stats(), "cpu");
  const fs::path dir = make_temp_dir("pi_processors_save_" + GetParam());
  save_policy_processors(dir, p);

  const std::set<std::string> want = r.at("files").get<std::set<std::string>>();
  EXPECT_EQ(files_under(dir), want);
  EXPECT_EQ(p.normalizer_state_file(), r.at("preprocessor").at("steps")[GetParam() == "pi0" ? 6 : 3].at("state_file"));
  expect_same_pipeline(Json::parse(read_file(dir / "policy_preprocessor.json")), r.at("preprocessor"), "preprocessor");
  expect_same_pipeline(Json::parse(read_file(dir / "policy_postprocessor.json")), r.at("postprocessor"),
                       "postprocessor");
  for (auto f = r.at("state_tensors").begin(); f != r.at("state_tensors").end(); ++f) {
    SCOPED_TRACE(f.key());
    const TensorMap ours = load_safetensors(dir / f.key());
    std::set<std::string> names, want_names;
    for (const auto& kv : ours) names.insert(kv.first);
    for (auto t = f.value().begin(); t != f.value().end(); ++t) {
      want_names.insert(t.key());
      if (ours.count(t.key()))
        EXPECT_TRUE(torch::allclose(ours.at(t.key()), reference_tensor(t.value()), 1e-6, 1e-6)) << t.key();
    }
    EXPECT_EQ(names, want_names);
  }
}

TEST_P(PiProcessors, PreprocessingIsLeRobots) {
  PaliGemmaTokenizerResolver resolver;
  const Json& r = reference().at(GetParam());
  auto cfg = make_config(GetParam());
  const PolicyProcessors p = make_policy_processors(*cfg, pi_processor_stats(), "cpu");
  std::vector<std::string> tasks;
  const Batch raw = raw_batch(r, tasks);
  const Batch out = p.preprocess(raw, tasks);
  expect_preprocessed(out, r.at("pre"), "made");
  EXPECT_EQ(out.at("observation.language.tokens").size(1), cfg->tokenizer_max_length);
  EXPECT_TRUE(torch::allclose(p.postprocess_action(out.at("action")), reference_tensor(r.at("post")), 1e-5, 1e-5));

  // The deployment path (no action): the same tokens and normalized observations.
  std::map<std::string, torch::Tensor> obs;
  for (const auto& kv : raw)
    if (kv.first != "action") obs[kv.first] = kv.second;
  const Batch dep = observation_inputs(
      *cfg, p, obs, tasks, torch::Device(torch::kCPU),
      [](const std::string&, const std::string&, const PolicyFeature&, const torch::Tensor& x) { return x; },
      [](const std::string& key) { FAIL() << "missing " << key; });
  Json expected_obs = r.at("pre");
  expected_obs.erase("action");
  expect_preprocessed(dep, expected_obs, "observation_inputs");
}

TEST_P(PiProcessors, LoadsLeRobotsFiles) {
  const Json& r = reference().at(GetParam());
  const fs::path dir = lerobot_folder(r, GetParam());
  const PolicyProcessors p = load_policy_processors(dir);  // no resolver: the tokenizer/ folder is used
  ASSERT_TRUE(p.language);
  ASSERT_TRUE(p.relative_actions);
  EXPECT_FALSE(p.relative_actions->enabled);
  EXPECT_EQ(p.language->prompt_step, GetParam() == "pi0" ? kPi0NewLineStep : kPi05PromptStep);
  EXPECT_EQ(p.language->padding, "max_length");
  std::vector<std::string> tasks;
  const Batch out = p.preprocess(raw_batch(r, tasks), tasks);
  expect_preprocessed(out, r.at("pre"), "loaded");
  expect_preprocessed(out, r.at("reloaded_pre"), "loaded (LeRobot's reload)");
  EXPECT_TRUE(torch::allclose(p.postprocess_action(out.at("action")), reference_tensor(r.at("reloaded_post")), 1e-5, 1e-5));

  // Saved again, they are the same files.
  const fs::path again = make_temp_dir("pi_processors_resave_" + GetParam());
  save_policy_processors(again, p);
  EXPECT_EQ(files_under(again), r.at("files").get<std::set<std::string>>());
  expect_same_pipeline(Json::parse(read_file(again / "policy_preprocessor.json")), r.at("preprocessor"), "resaved pre");
  expect_same_pipeline(Json::parse(read_file(again / "policy_postprocessor.json")), r.at("postprocessor"),
                       "resaved post");
}

TEST_P(PiProcessors, RoundTrip) {
  PaliGemmaTokenizerResolver resolver;
  const Json& r = reference().at(GetParam());
  auto cfg = make_config(GetParam());
  const PolicyProcessors p = make_policy_processors(*cfg, pi_processor_stats(), "cpu");
  const fs::path dir = make_temp_dir("pi_processors_rt_" + GetParam());
  save_policy_processors(dir, p);
  const PolicyProcessors q = load_policy_processors(dir);
  EXPECT_EQ(q.normalizer_state_file(), p.normalizer_state_file());
  EXPECT_EQ(q.preprocessor_steps(), p.preprocessor_steps());
  std::vector<std::string> tasks;
  const Batch raw = raw_batch(r, tasks);
  const Batch a = p.preprocess(raw, tasks), b = q.preprocess(raw, tasks);
  for (const auto& kv : a) EXPECT_TRUE(torch::equal(kv.second, b.at(kv.first))) << kv.first;
}

INSTANTIATE_TEST_SUITE_P(Pi, PiProcessors, ::testing::Values("pi0", "pi05", "pi05_wide_state"),
                         [](const auto& info) { return info.param; });

// π0.5 builds its prompt from the normalized state: the same raw batch with another state
// normalization gives other tokens, π0's do not depend on the state.
TEST(PiProcessorsOrder, Pi05PromptReadsTheNormalizedState) {
  PaliGemmaTokenizerResolver resolver;
  const Json& r = reference().at("pi05");
  auto cfg = make_config("pi05");
  Stats shifted = pi_processor_stats();
  shifted["observation.state"]["q01"] = shifted["observation.state"]["q01"] - 5.0;
  shifted["observation.state"]["q99"] = shifted["observation.state"]["q99"] + 5.0;
  const PolicyProcessors p = make_policy_processors(*cfg, pi_processor_stats(), "cpu");
  const PolicyProcessors q = make_policy_processors(*cfg, shifted, "cpu");
  std::vector<std::string> tasks;
  const Batch raw = raw_batch(r, tasks);
  const auto prompts = q.language->prompts(tasks, q.normalizer.normalize(raw));
  EXPECT_FALSE(torch::equal(p.preprocess(raw, tasks).at("observation.language.tokens"),
                            q.preprocess(raw, tasks).at("observation.language.tokens")))
      << prompts[0];
  EXPECT_EQ(prompts[0].rfind("Task: pick up the red cube, State: ", 0), 0u) << prompts[0];
}

// π0.5 with a state (5) wider than max_state_dim (3), as LeRobot 0.6.2 runs it: its prompt step
// writes every entry's bin (PreprocessingIsLeRobots/pi05_wide_state compares the tokens with
// LeRobot's); here the prompt itself, and that the tokens were not cut short.
TEST(PiProcessorsWideState, Pi05PromptHasABinForEveryStateEntry) {
  PaliGemmaTokenizerResolver resolver;
  const Json& r = reference().at("pi05_wide_state");
  ASSERT_LT(r.at("max_state_dim").get<int64_t>(), r.at("batch").at("observation.state").at("shape")[1].get<int64_t>());
  auto cfg = make_config("pi05_wide_state");
  const PolicyProcessors p = make_policy_processors(*cfg, pi_processor_stats(), "cpu");
  std::vector<std::string> tasks;
  const Batch raw = raw_batch(r, tasks);
  const auto prompts = p.language->prompts(tasks, p.normalizer.normalize(raw));
  ASSERT_EQ(prompts.size(), 2u);
  for (const auto& prompt : prompts) {
    const auto from = prompt.find("State: "), to = prompt.find(";\nAction: ");
    ASSERT_NE(from, std::string::npos) << prompt;
    ASSERT_NE(to, std::string::npos) << prompt;
    const std::string bins = prompt.substr(from + 7, to - from - 7);
    EXPECT_EQ(std::count(bins.begin(), bins.end(), ' '), 4) << prompt;  // five bins
  }
  const Batch out = p.preprocess(raw, tasks);
  const auto mask = out.at("observation.language.attention_mask").to(torch::kLong).sum(1);
  EXPECT_LT(mask.max().item<int64_t>(), cfg->tokenizer_max_length) << "the prompt was truncated";
}

// Which widths the checks take (a fine-tuned base keeps its config's 3-dim state feature while the
// dataset, the stats and the robot have 5): π0.5 any (prompt text; LeRobot's make_policy keeps the
// base's features and its normalizer takes the dataset's stats), π0 up to max_state_dim (its
// state_proj), π0.5 with proprioceptive memory too (its history projection pads the state).
TEST(PiProcessorsWideState, StatesAndStatsWiderThanTheFeatureFitPi05Only) {
  const PolicyFeature state{"STATE", {3}};
  Stats stats = pi_processor_stats();
  PI05Config pi05;
  PI0Config pi0;
  for (PiConfigBase* c : std::initializer_list<PiConfigBase*>{&pi05, &pi0}) {
    c->max_state_dim = 3;
    c->input_features = {{"observation.state", state}};
    c->output_features = {{"action", {"ACTION", {4}}}};
  }
  EXPECT_TRUE(input_fits(pi05, state, {5}));
  EXPECT_TRUE(input_fits(pi05, state, {2}));
  EXPECT_FALSE(input_fits(pi05, state, {5, 1}));
  EXPECT_FALSE(input_fits(pi0, state, {5}));
  EXPECT_TRUE(input_fits(pi0, state, {2}));
  EXPECT_TRUE(input_fits(pi05, {"ACTION", {4}}, {32}));  // actions: max_action_dim (32) still bounds them
  EXPECT_FALSE(input_fits(pi05, {"ACTION", {4}}, {33}));
  PI05Config memory = pi05;
  memory.use_proprioceptive_memory = true;
  EXPECT_FALSE(input_fits(memory, state, {5}));

  const Normalizer n({{"observation.state", state}}, {{"STATE", "QUANTILES"}}, {{"observation.state", stats.at("observation.state")}});
  EXPECT_TRUE(normalizer_stat_problems(n, pi05).empty());
  const auto problems = normalizer_stat_problems(n, pi0);
  ASSERT_EQ(problems.size(), 2u);  // q01 and q99
  EXPECT_NE(problems[0].find("observation.state/q01' has shape (5,)"), std::string::npos) << problems[0];
}

}  // namespace
}  // namespace lerobot
