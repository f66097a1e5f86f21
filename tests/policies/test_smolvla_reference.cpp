// SmolVLA against Python LeRobot 0.6.2 itself: tests/policies/data/smolvla_reference.json was
// written by scripts/python_lerobot/smolvla_reference.py, which builds LeRobot's SmolVLAPolicy on
// the tiny SmolVLM folder tests/policies/data/smolvla_tiny_vlm (made by smolvla_tiny_vlm.py with
// transformers 5.12.1), fills every weight from a formula (computed here the same way) and records
// its state-dict layout, trainable parameters, tokenized tasks, loss, gradients and action chunk,
// for three layouts of the VLM and expert, with the backbone loaded as LeRobot loads it
// (load_vlm_weights: bfloat16 VLM and expert, float32 cross-attention k/v and projections), and
// with the Aloha conversions (adapt_to_pi_aloha, 14-dim state and action).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "lerobot/common/config/json.h"
#include "policy_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/policies/rtc.h"
#include "lerobot/policies/smolvla/modeling_smolvla.h"

namespace lerobot {
namespace {

const Json& reference() {
  static const Json j = [] {
    std::ifstream in(std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_reference.json");
    return Json::parse(in);
  }();
  return j;
}

std::filesystem::path vlm_dir() { return std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/smolvla_tiny_vlm"; }

// The script's formula (policy_test_helpers.h).
torch::Tensor formula(int64_t n, int64_t k, double scale) { return testing::reference_formula(n, k, scale); }

SmolVLAConfig reference_config(const std::string& variant) {
  const auto& r = reference();
  const auto& c = r["variants"][variant]["config"];
  SmolVLAConfig cfg;
  Json j = c;
  j.erase("device");
  j["vlm_model_name"] = vlm_dir().string();
  apply_json(cfg, j, "reference");
  for (const auto& [key, shape] : r["cameras"].items())
    cfg.input_features[key] = {"VISUAL", shape.get<std::vector<int64_t>>()};
  cfg.input_features["observation.state"] = {"STATE", {r["variants"][variant]["state_dim"].get<int64_t>()}};
  cfg.output_features["action"] = {"ACTION", {r["variants"][variant]["action_dim"].get<int64_t>()}};
  cfg.input_feature_order = {"observation.images.top", "observation.images.wrist", "observation.state"};
  return cfg;
}

std::shared_ptr<SmolVLAPolicy> make_policy(const std::string& variant) {
  auto policy = std::make_shared<SmolVLAPolicy>(reference_config(variant), vlm_dir());
  auto sd = policy->state_dict();
  torch::NoGradGuard no_grad;
  const double scale = reference()["fill_scale"];
  int64_t k = 0;
  for (auto& [name, t] : sd) {  // TensorMap is sorted by name, as the script's sorted(state_dict)
    if (t.is_floating_point()) t.copy_(formula(t.numel(), k, scale).view(t.sizes()));
    ++k;
  }
  return policy;
}

torch::Tensor t(int64_t k, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return formula(n, k, 1.0).view(shape);
}

Batch inputs(const std::string& variant) {
  const auto& r = reference();
  const auto& v = r["variants"][variant];
  const int64_t b = r["batch"];
  Batch batch;
  int64_t i = 0;
  for (const auto& key : {"observation.images.top", "observation.images.wrist"}) {
    auto shape = r["cameras"][key].get<std::vector<int64_t>>();
    shape.insert(shape.begin(), b);
    batch[key] = 0.5 + 0.5 * t(200 + i++, shape);
  }
  batch["observation.state"] = t(210, {b, v["state_dim"].get<int64_t>()});
  batch["action"] = t(211, {b, 5, v["action_dim"].get<int64_t>()});
  auto pad = torch::zeros({b, 5}, torch::kBool);
  pad.index_put_({1, torch::indexing::Slice(3, torch::indexing::None)}, true);
  batch["action_is_pad"] = pad;
  batch[kLanguageTokens] = torch::tensor(v["tokens"].get<std::vector<std::vector<int64_t>>>()[0]).view({1, -1});
  auto tokens = v["tokens"].get<std::vector<std::vector<int64_t>>>();
  auto mask = v["token_mask"].get<std::vector<std::vector<bool>>>();
  std::vector<torch::Tensor> rows, masks;
  for (size_t r2 = 0; r2 < tokens.size(); ++r2) {
    rows.push_back(torch::tensor(tokens[r2]));
    std::vector<int64_t> m(mask[r2].begin(), mask[r2].end());
    masks.push_back(torch::tensor(m).to(torch::kBool));
  }
  batch[kLanguageTokens] = torch::stack(rows);
  batch[kLanguageMask] = torch::stack(masks);
  return batch;
}

// The bfloat16 variant gets a bfloat16-sized tolerance: LibTorch 1.13's bfloat16 kernels (here)
// round differently from torch 2.6's (the reference), by 0.4 % in the loss after four layers.
// Its gradient sums (sums of many terms of both signs) differ by up to 20 % for that reason, so
// for it only which parameters get a gradient is compared.
bool is_bf16(const std::string& variant) { return variant == "bf16_backbone"; }
double tolerance(const std::string& variant, double float32_tol) { return is_bf16(variant) ? 1e-2 : float32_tol; }

void expect_close(double got, double want, double rel, const std::string& what) {
  EXPECT_NEAR(got, want, rel * std::max(1.0, std::abs(want))) << what;
}

class SmolVLAReference : public ::testing::TestWithParam<std::string> {};

TEST_P(SmolVLAReference, StateDictNamesShapesAndTrainableParametersMatchLeRobot) {
  const auto& v = reference()["variants"][GetParam()];
  auto policy = make_policy(GetParam());
  auto sd = policy->state_dict();
  ASSERT_EQ(sd.size(), v["keys"].size());
  for (const auto& [name, spec] : v["keys"].items()) {
    ASSERT_TRUE(sd.count(name)) << "missing " << name;
    EXPECT_EQ(sd.at(name).sizes().vec(), spec["shape"].get<std::vector<int64_t>>()) << name;
    const std::string dtype = sd.at(name).scalar_type() == torch::kBFloat16 ? "bfloat16"
                              : sd.at(name).scalar_type() == torch::kFloat  ? "float32"
                                                                            : std::string(c10::toString(sd.at(name).scalar_type()));
    EXPECT_EQ(dtype, spec["dtype"].get<std::string>()) << name;
  }
  std::vector<std::string> params, trainable;
  for (const auto& p : policy->named_parameters()) {
    params.push_back(p.key());
    if (p.value().requires_grad()) trainable.push_back(p.key());
  }
  EXPECT_EQ(params, v["parameters"].get<std::vector<std::string>>()) << "named_parameters order (optimizer numbering)";
  EXPECT_EQ(trainable, v["trainable"].get<std::vector<std::string>>());
  const auto groups = policy->optim_param_groups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].names, params);
}

TEST_P(SmolVLAReference, LossLoggedValuesAndGradientsMatchLeRobot) {
  const auto& v = reference()["variants"][GetParam()];
  auto policy = make_policy(GetParam());
  policy->train();
  const int64_t b = reference()["batch"];
  const int64_t m = v["config"]["max_action_dim"];
  auto out = policy->forward(inputs(GetParam()), t(220, {b, 5, m}), torch::tensor({0.3f, 0.8f}));
  out.loss.backward();
  const double tol = tolerance(GetParam(), 1e-5);
  expect_close(out.loss.item<double>(), v["loss"].get<double>(), tol, "loss");
  for (const auto& [name, want] : v["values"].items()) {
    if (name == "loss") continue;
    ASSERT_TRUE(out.values.count(name)) << name;
    expect_close(out.values.at(name).item<double>(), want.get<double>(), tol, name);
  }
  auto named = policy->named_parameters();
  for (const auto& [name, want] : v["grads"].items()) {
    const auto& p = named[name];
    if (want.is_null()) {
      EXPECT_FALSE(p.grad().defined()) << name << " is frozen in LeRobot";
      continue;
    }
    ASSERT_TRUE(p.grad().defined()) << name;
    if (is_bf16(GetParam())) continue;
    const double g = p.grad().sum().item<double>();
    EXPECT_NEAR(g, want.get<double>(), tolerance(GetParam(), 2e-4) * std::max(1e-3, std::abs(want.get<double>())) + 1e-9)
        << name;
  }
  auto bias = policy->model->action_out_proj->bias.grad();
  auto want_bias = v["action_out_proj_bias_grad"].get<std::vector<double>>();
  for (size_t i = 0; i < want_bias.size(); ++i)
    EXPECT_NEAR(bias[i].item<double>(), want_bias[i], is_bf16(GetParam()) ? 0.1 * std::abs(want_bias[i]) + 1e-3 : tol) << i;
}

TEST_P(SmolVLAReference, SeededLossDrawsNoiseAndTimeAsLeRobot) {
  const auto& v = reference()["variants"][GetParam()];
  auto policy = make_policy(GetParam());
  policy->train();
  torch::manual_seed(7);
  auto out = policy->forward(inputs(GetParam()));
  expect_close(out.loss.item<double>(), v["seeded_loss"].get<double>(), tolerance(GetParam(), 1e-5), "seeded loss");
}

TEST_P(SmolVLAReference, KvCachedDenoisingGivesLeRobotsChunk) {
  const auto& v = reference()["variants"][GetParam()];
  auto policy = make_policy(GetParam());
  const int64_t b = reference()["batch"];
  const int64_t m = v["config"]["max_action_dim"];
  auto chunk = policy->predict_action_chunk(inputs(GetParam()), t(221, {b, 5, m}));
  EXPECT_EQ(chunk.sizes().vec(), v["chunk_shape"].get<std::vector<int64_t>>());
  auto want = torch::tensor(v["chunk"].get<std::vector<double>>()).to(torch::kFloat).view(chunk.sizes());
  const double scale = std::max(1.0, want.abs().max().item<double>());
  EXPECT_LT((chunk - want).abs().max().item<double>(), tolerance(GetParam(), 2e-5) * scale) << chunk << want;
}

INSTANTIATE_TEST_SUITE_P(Layouts, SmolVLAReference, ::testing::Values("default", "half_expert", "self_attn", "bf16_backbone", "aloha"));

RtcSchedule schedule_of(const std::string& name) {
  if (name == "ZEROS") return RtcSchedule::kZeros;
  if (name == "ONES") return RtcSchedule::kOnes;
  if (name == "EXP") return RtcSchedule::kExp;
  return RtcSchedule::kLinear;
}

// Real-time chunking (guided) against LeRobot's RTCProcessor: the chunk predicted with the
// previous chunk's leftover (4 steps of the 2 or 14 action dims, padded to the 5 x 8 or 5 x 16
// being denoised) under each prefix schedule and with an execution horizon given at the call;
// with no leftover the chunk is the plain one.
class SmolVLARealTimeChunking : public ::testing::TestWithParam<std::string> {};

TEST_P(SmolVLARealTimeChunking, GuidedChunksAreLeRobots) {
  const auto& v = reference()["variants"][GetParam()];
  const auto& r = v["rtc"];
  auto policy = make_policy(GetParam());
  const int64_t b = reference()["batch"];
  const int64_t m = v["config"]["max_action_dim"];
  const auto left = torch::tensor(r["leftover"].get<std::vector<double>>())
                        .to(torch::kFloat)
                        .view(r["leftover_shape"].get<std::vector<int64_t>>());
  const auto plain = policy->predict_action_chunk(inputs(GetParam()), t(221, {b, 5, m}));
  std::vector<torch::Tensor> chunks;
  for (const auto& c : r["cases"]) {
    RtcSettings settings;
    settings.schedule = schedule_of(c["schedule"]);
    settings.execution_horizon = r["execution_horizon"];
    settings.max_guidance_weight = r["max_guidance_weight"];
    policy->set_rtc(settings);
    RtcGuidance g;
    g.prev_chunk_left_over = left;
    g.inference_delay = r["inference_delay"];
    if (!c["horizon"].is_null()) g.execution_horizon = c["horizon"].get<int64_t>();
    auto chunk = policy->predict_action_chunk_rtc(inputs(GetParam()), g, t(221, {b, 5, m}));
    auto want = torch::tensor(c["chunk"].get<std::vector<double>>()).to(torch::kFloat).view(chunk.sizes());
    const double scale = std::max(1.0, want.abs().max().item<double>());
    EXPECT_LT((chunk - want).abs().max().item<double>(), 2e-5 * scale)
        << c["schedule"].get<std::string>() << " horizon " << c["horizon"] << "\n" << chunk << want;
    EXPECT_GT((chunk - plain).abs().max().item<double>(), 1e-3) << "the leftover pulls the chunk";
    chunks.push_back(chunk);
  }
  for (size_t i = 1; i < chunks.size(); ++i)
    EXPECT_GT((chunks[i] - chunks[0]).abs().max().item<double>(), 1e-3) << "case " << i << " is the first one's";
  // No leftover yet: the first chunk is the plain one.
  auto first = policy->predict_action_chunk_rtc(inputs(GetParam()), RtcGuidance{}, t(221, {b, 5, m}));
  auto want_first = torch::tensor(r["first_chunk"].get<std::vector<double>>()).to(torch::kFloat).view(first.sizes());
  EXPECT_LT((first - want_first).abs().max().item<double>(), 2e-5 * std::max(1.0, want_first.abs().max().item<double>()));
  EXPECT_TRUE(torch::allclose(first, plain, 1e-6, 1e-6));
  // select_action refuses it, as LeRobot's asserts; turned off, it is back.
  try {
    policy->select_action(inputs(GetParam()));
    ADD_FAILURE() << "select_action ran with real-time chunking on";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "policy.rtc_config") << e.what();
  }
  auto rtc_json = [&] { return dynamic_cast<const SmolVLAConfig&>(policy->config()).rtc_config; };
  EXPECT_EQ(rtc_json().value("prefix_attention_schedule", ""), "LINEAR") << "config.json records it";
  policy->set_rtc(std::nullopt);
  EXPECT_TRUE(rtc_json().is_null());
  // Mode "trained" is π0.5's (trained with rtc_training_max_delay): SmolVLA refuses it through the
  // API as through rtc_config, and keeps its settings.
  RtcSettings trained;
  trained.trained = true;
  try {
    policy->set_rtc(trained);
    ADD_FAILURE() << "SmolVLA took mode 'trained'";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "policy.rtc_config.mode") << e.what();
  }
  EXPECT_TRUE(rtc_json().is_null());
  EXPECT_EQ(policy->select_action(inputs(GetParam())).size(0), b);
  EXPECT_THROW(policy->predict_action_chunk_rtc(inputs(GetParam()), RtcGuidance{}), Error);
}

INSTANTIATE_TEST_SUITE_P(Layouts, SmolVLARealTimeChunking, ::testing::Values("default", "aloha"));

TEST(RealTimeChunking, PrefixWeightsAreLeRobots) {
  const auto& weights = reference()["variants"]["default"]["rtc"]["weights"];
  ASSERT_EQ(weights.size(), 4u);
  for (const auto& [name, rows] : weights.items()) {
    for (const auto& row : rows) {
      const auto w = rtc_prefix_weights(schedule_of(name), row[0], row[1], row[2]);
      const auto want = row[3].get<std::vector<double>>();
      ASSERT_EQ(w.numel(), static_cast<int64_t>(want.size())) << name << " " << row;
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(w[i].item<double>(), want[i], 1e-7) << name << " " << row;
    }
  }
}

// rtc_config as LeRobot's RTCConfig: its fields and checks, and ours (guided mode only).
TEST(RealTimeChunking, ConfigIsLeRobotsRtcConfig) {
  EXPECT_FALSE(parse_rtc_config(nullptr, "policy.rtc_config"));
  EXPECT_FALSE(parse_rtc_config(Json{{"enabled", false}, {"mode", "trained"}}, "policy.rtc_config"));
  const auto s = parse_rtc_config(Json::parse(R"({"enabled": true, "mode": "guided", "prefix_attention_schedule": "EXP",
      "max_guidance_weight": 3.5, "execution_horizon": 7, "debug": false, "debug_maxlen": 100})"), "policy.rtc_config");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->schedule, RtcSchedule::kExp);
  EXPECT_EQ(s->max_guidance_weight, 3.5);
  EXPECT_EQ(s->execution_horizon, 7);
  const auto round = parse_rtc_config(rtc_config_json(*s), "x");
  ASSERT_TRUE(round);
  EXPECT_EQ(round->schedule, RtcSchedule::kExp);
  EXPECT_EQ(round->execution_horizon, 7);
  EXPECT_EQ(parse_rtc_config(Json::object(), "p")->schedule, RtcSchedule::kLinear) << "LeRobot's defaults";
  auto flag_of = [](const Json& j) {
    try {
      parse_rtc_config(j, "policy.rtc_config");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      return e.where();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(flag_of({{"mode", "fast"}}), "policy.rtc_config.mode");
  EXPECT_EQ(flag_of({{"mode", "trained"}}), "policy.rtc_config.mode");
  EXPECT_EQ(flag_of({{"max_guidance_weight", 0}}), "policy.rtc_config.max_guidance_weight");
  EXPECT_EQ(flag_of({{"debug_maxlen", 0}}), "policy.rtc_config.debug_maxlen");
  EXPECT_EQ(flag_of({{"prefix_attention_schedule", "QUADRATIC"}}), "policy.rtc_config.prefix_attention_schedule");
  EXPECT_EQ(flag_of({{"execution_horizont", 3}}), "policy.rtc_config.execution_horizont");
  EXPECT_EQ(flag_of({{"execution_horizon", "ten"}}), "policy.rtc_config");
  EXPECT_EQ(flag_of(Json::array()), "policy.rtc_config");
}

}  // namespace
}  // namespace lerobot
