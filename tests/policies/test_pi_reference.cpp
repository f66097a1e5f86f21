// π0 and π0.5 against Python LeRobot 0.6.2's own code at tiny sizes: tests/policies/data/
// pi_reference.json, written by scripts/python_lerobot/pi_reference.py (LeRobot's PI0Policy and
// PI05Policy with get_gemma_config and PaliGemma's vision config shrunk; see its docstring).
// Compared per layout: every state-dict name, shape and dtype in LeRobot's order, which
// parameters train, the camera preprocessing and image embedding, the per-element flow-matching
// losses for a given noise and time, the policy's loss and the gradient of every parameter, which
// parameters get none, and the action chunks of predict_action_chunk for a given noise.
//
// The reference ran under transformers 5.12, whose SigLIP vision model has no `vision_model.`
// level; LeRobot 0.6.2 pins transformers 5.4-5.5, where it has one (LeRobot's own pi05/memory
// path reads `vision_tower.vision_model`, and openpi's checkpoints use it). lerobot.cpp keeps the
// level, and the names are compared with it removed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/pi/modeling_pi.h"
#include "pi_test_helpers.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::expect_close;
using testing::reference_json;

std::string reference_name(const std::string& name) { return testing::pi_reference_name(name); }
std::unique_ptr<PiPolicy> make_policy(const Json& layout) { return testing::make_pi_policy(layout); }
void fill(PiPolicy& policy) { testing::pi_fill(policy); }
Batch make_batch(const Json& layout) { return testing::pi_batch(layout["config"]["tiny"]); }
torch::Tensor noise() { return testing::formula_tensor(300, {2, 4, 8}, 1.0); }
torch::Tensor flow_time() { return torch::tensor({0.3, 0.85}, torch::kFloat); }
// The clean-prefix mask LeRobot drew in the policy-level forward of a training-time RTC layout
// (its "rtc" → "prefix_mask"), else undefined.
torch::Tensor drawn_prefix_mask(const Json& layout) {
  if (!layout.contains("rtc")) return {};
  std::vector<uint8_t> bits;
  for (const auto& row : layout["rtc"]["prefix_mask"])
    for (const auto& v : row) bits.push_back(v.get<bool>());
  const int64_t rows = layout["rtc"]["prefix_mask"].size();
  return torch::tensor(bits, torch::kUInt8).view({rows, -1}).to(torch::kBool);
}

torch::ScalarType dtype_of(const std::string& name) {
  if (name == "float32") return torch::kFloat;
  if (name == "bfloat16") return torch::kBFloat16;
  if (name == "int64") return torch::kLong;
  ADD_FAILURE() << "dtype " << name;
  return torch::kDouble;
}

class PiReference : public ::testing::TestWithParam<std::string> {
 protected:
  const Json& layout() const { return reference_json("pi")["layouts"][GetParam()]; }
  bool bf16() const { return layout()["config"]["tiny"]["dtype"] == "bfloat16"; }
};

TEST_P(PiReference, StateDictNamesShapesDtypesAndTrainableParameters) {
  auto policy = make_policy(layout());
  const auto state = policy->state_dict();
  std::vector<std::string> ours;
  for (const auto& p : policy->named_parameters(true)) ours.push_back(reference_name(p.key()));
  const auto& ref_params = layout()["parameters"];
  ASSERT_EQ(ours.size(), ref_params.size());
  size_t i = 0;
  for (const auto& p : policy->named_parameters(true)) {
    EXPECT_EQ(ours[i], ref_params[i][0].get<std::string>()) << "parameter " << i << " (LeRobot's order)";
    EXPECT_EQ(p.value().requires_grad(), ref_params[i][1].get<bool>()) << ours[i];
    ++i;
  }
  const auto& ref_state = layout()["state_dict"];
  ASSERT_EQ(state.size(), ref_state.size());
  std::map<std::string, torch::Tensor> by_name;
  for (const auto& [name, t] : state) by_name[reference_name(name)] = t;
  int64_t numel = 0;
  for (const auto& entry : ref_state) {
    const std::string name = entry[0];
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      ADD_FAILURE() << "missing " << name;
      continue;
    }
    EXPECT_EQ(it->second.sizes().vec(), entry[1].get<std::vector<int64_t>>()) << name;
    EXPECT_EQ(it->second.scalar_type(), dtype_of(entry[2])) << name;
    numel += it->second.numel();
  }
  EXPECT_EQ(numel, layout()["num_parameters"].get<int64_t>());
}

TEST_P(PiReference, ImageEmbeddingLossesAndGradients) {
  auto policy = make_policy(layout());
  fill(*policy);
  policy->train();
  const Batch batch = make_batch(layout());
  const auto& stages = layout()["stages"];
  // bfloat16 within 0.1 %: 0.857728 vs LeRobot's 0.857879. Before the rotary frequencies were
  // rounded to bfloat16 as LeRobot's model.to(bfloat16) rounds that buffer, it was 0.855365.
  const double rtol = bf16() ? 1e-3 : 1e-5;
  {
    torch::NoGradGuard no_grad;
    auto img = batch.at("observation.images.top").to(torch::kFloat) * 2.0 - 1.0;
    auto emb = policy->model->paligemma_with_expert->embed_image(img);
    expect_close(emb.flatten(), stages["image0_embedding"], 1e-4, 1e-5, "image 0 embedding");
    auto lang = policy->model->paligemma_with_expert->embed_language_tokens(batch.at("observation.language.tokens"));
    expect_close(lang.to(torch::kDouble).sum().item<double>(), stages["language_embedding"]["sum"].get<double>(), rtol, 1e-3,
                 "language embedding sum");
  }
  // A training-time RTC layout's loss and gradients are for the prefix mask LeRobot drew.
  auto out = policy->forward(batch, noise(), flow_time(), drawn_prefix_mask(layout()));
  expect_close(out.loss.item<double>(), layout()["loss"]["loss"].get<double>(), rtol, 1e-6, "loss");
  out.loss.backward();
  std::map<std::string, torch::Tensor> params;
  std::vector<std::string> without;
  for (const auto& p : policy->named_parameters(true)) {
    params[reference_name(p.key())] = p.value();
    if (!p.value().grad().defined()) without.push_back(reference_name(p.key()));
  }
  std::sort(without.begin(), without.end());
  // LeRobot computes the last language-model layer's prefix output and its final norm, which
  // nothing reads; so do we not. Their parameters get no gradient either way.
  EXPECT_EQ(without, layout()["no_grad"].get<std::vector<std::string>>());
  // bfloat16: each gradient within 2 % (the spread is 0-1 %, largest on the expert's q
  // projections, whose gradients pass through the softmax); float32 within 2e-4 (seen: 7e-5).
  // Gradients that are zero in exact arithmetic (a key bias: softmax ignores it) are rounding
  // noise on both sides, hence the absolute 1e-5.
  const double grad_rtol = bf16() ? 2e-2 : 2e-4;
  for (const auto& [name, ref] : layout()["grads"].items()) {
    auto it = params.find(name);
    if (it == params.end() || !it->second.grad().defined()) {
      ADD_FAILURE() << name << " has no gradient here";
      continue;
    }
    const auto g = it->second.grad().to(torch::kDouble);
    const double abs_sum = ref["abs_sum"];
    expect_close(g.abs().sum().item<double>(), abs_sum, grad_rtol, 1e-5, name + " gradient |sum|");
    expect_close(g.sum().item<double>(), ref["sum"].get<double>(), 0, grad_rtol * abs_sum + 1e-5, name + " gradient sum");
  }
}

TEST_P(PiReference, PerElementLossesForAGivenNoiseAndTime) {
  auto policy = make_policy(layout());
  fill(*policy);
  policy->train();
  torch::NoGradGuard no_grad;
  const Batch batch = make_batch(layout());
  // Before the action dims are cut: the padded dims' losses too.
  const auto in = policy->prepare_inputs(batch);
  auto actions = torch::nn::functional::pad(batch.at("action"), torch::nn::functional::PadFuncOptions({0, 4}));
  auto losses = policy->model->forward(in, actions, noise(), flow_time());
  const double tol = bf16() ? 3e-2 : 1e-4;
  expect_close(losses.flatten(), layout()["losses"], tol, tol, "per-element losses");
}

TEST_P(PiReference, ActionChunksForAGivenNoise) {
  auto policy = make_policy(layout());
  fill(*policy);
  const Batch batch = make_batch(layout());
  const double tol = bf16() ? 3e-2 : 1e-4;
  expect_close(policy->predict_action_chunk(batch, noise()).flatten(), layout()["chunk"], tol, tol, "chunk");
  expect_close(policy->predict_action_chunk(batch, noise(), 1).flatten(), layout()["chunk_steps1"], tol, tol,
               "chunk after one Euler step");
}

// A camera of the config absent from the batch (a published base's base_0_rgb when the dataset
// has other cameras) is what LeRobot's _preprocess_images (modeling_pi0.py / modeling_pi05.py)
// makes of it: the present cameras first in config order, then a -1 image with a false mask per
// absent one, the same path its empty_cameras slots take. So the "pi0" layout (cameras top and
// wrist, one empty slot) with the empty slot swapped for an absent camera listed first gives the
// images, masks and per-element losses LeRobot computed for that layout.
TEST(PiAbsentCamera, FilledAsLeRobotFillsItsEmptySlotsWhereverTheConfigListsIt) {
  const Json& lay = reference_json("pi")["layouts"]["pi0"];
  const Json tiny = lay["config"]["tiny"];
  ASSERT_EQ(tiny["empty_cameras"], 1);
  auto policy = testing::make_pi_policy("pi0", tiny, [](PiConfigBase& c) {
    c.empty_cameras = 0;
    c.input_features["observation.images.base_0_rgb"] = {"VISUAL", {3, 224, 224}};
    c.input_feature_order.insert(c.input_feature_order.begin(), "observation.images.base_0_rgb");
  });
  ASSERT_EQ(policy->config().image_feature_keys().front(), "observation.images.base_0_rgb");
  auto reference = make_policy(lay);
  fill(*policy);
  fill(*reference);
  policy->train();
  torch::NoGradGuard no_grad;
  const Batch batch = make_batch(lay);
  ASSERT_FALSE(batch.count("observation.images.base_0_rgb"));
  const auto in = policy->prepare_inputs(batch), want = reference->prepare_inputs(batch);
  ASSERT_EQ(in.images.size(), 3u);
  ASSERT_EQ(want.images.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(torch::equal(in.images[i], want.images[i])) << "image " << i;
    EXPECT_TRUE(torch::equal(in.image_masks[i], want.image_masks[i])) << "mask " << i;
  }
  EXPECT_TRUE((in.images[2] == -1).all().item<bool>());
  EXPECT_FALSE(in.image_masks[2].any().item<bool>());
  EXPECT_TRUE(in.image_masks[0].all().item<bool>());
  auto actions = torch::nn::functional::pad(batch.at("action"), torch::nn::functional::PadFuncOptions({0, 4}));
  expect_close(policy->model->forward(in, actions, noise(), flow_time()).flatten(), lay["losses"], 1e-4, 1e-4,
               "per-element losses");
}

// A state wider than max_state_dim (LeRobot's pad_vector leaves it as it is). π0.5 reads the
// state only as prompt text: the "pi05_wide_state" layout (state 5, max_state_dim 3) is one of
// PiReference's, equal to LeRobot's there. π0 feeds it to state_proj (max_state_dim inputs):
// LeRobot's forward raised on it, and ours refuses it by name when the policy is built.
TEST(PiWideState, Pi0RefusesAStateWiderThanMaxStateDimWhereLeRobotRaises) {
  const Json& lerobot = reference_json("pi")["wide_state_pi0"];
  ASSERT_TRUE(lerobot["raised"].get<bool>()) << lerobot.dump();
  EXPECT_NE(lerobot["error"].get<std::string>().find("shapes cannot be multiplied"), std::string::npos) << lerobot.dump();
  const Json tiny = reference_json("pi")["layouts"]["pi0_expert_only"]["config"]["tiny"];
  const int64_t max_state_dim = lerobot["max_state_dim"];
  ASSERT_LT(max_state_dim, tiny["state_dim"].get<int64_t>());
  try {
    testing::make_pi_policy("pi0", tiny, [&](PiConfigBase& c) { c.max_state_dim = max_state_dim; });
    FAIL() << "π0 was built with a state wider than max_state_dim";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("max_state_dim=3"), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("policy.max_state_dim"), std::string::npos) << e.where();
  }
  // Both refuse an action wider than max_action_dim (LeRobot's action_in_proj would raise).
  for (const char* kind : {"pi0", "pi05"}) {
    try {
      testing::make_pi_policy(kind, tiny, [](PiConfigBase& c) { c.max_action_dim = 3; });
      FAIL() << kind << " was built with an action wider than max_action_dim";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << kind;
      EXPECT_NE(e.where().find("policy.max_action_dim"), std::string::npos) << e.where();
    }
  }
  // π0.5 is built with the wider state, and its losses are the "pi05_wide_state" layout's.
  EXPECT_NO_THROW(testing::make_pi_policy("pi05", tiny, [&](PiConfigBase& c) { c.max_state_dim = max_state_dim; }));
}

INSTANTIATE_TEST_SUITE_P(Layouts, PiReference,
                         ::testing::Values("pi0", "pi05", "pi05_bf16", "pi0_expert_only", "pi05_wide_state",
                                           "pi05_rtc_trained"));

// π0.5's training-time real-time chunking (rtc_training_max_delay 2, LeRobot's "pi05_rtc_trained"
// layout): a clean prefix of the chunk keeps flow time 0 (its time embedding and adaRMS
// conditioning become per action), and the loss averages only the actions after it.
class PiTrainedRtcReference : public ::testing::Test {
 protected:
  const Json& layout() const { return reference_json("pi")["layouts"]["pi05_rtc_trained"]; }
};

// The delays LeRobot drew (torch.randint after torch.manual_seed(5)) are the ones ours draws from
// the same seed; with them, the per-element losses (prefix entries included) match.
TEST_F(PiTrainedRtcReference, DrawnPrefixAndPerElementLossesWithIt) {
  auto policy = make_policy(layout());
  fill(*policy);
  policy->train();
  const Batch batch = make_batch(layout());
  const auto mask = drawn_prefix_mask(layout());
  EXPECT_TRUE(torch::equal(mask.sum(1).to(torch::kLong), torch::tensor(layout()["rtc"]["delays"].get<std::vector<int64_t>>())));
  torch::manual_seed(5);
  const auto ours = torch::randint(0, 3, {2}, torch::kLong);
  EXPECT_TRUE(torch::equal(ours, torch::tensor(layout()["rtc"]["delays"].get<std::vector<int64_t>>())))
      << "our draw " << ours;
  torch::NoGradGuard no_grad;
  const auto in = policy->prepare_inputs(batch);
  auto actions = torch::nn::functional::pad(batch.at("action"), torch::nn::functional::PadFuncOptions({0, 4}));
  auto losses = policy->model->forward(in, actions, noise(), flow_time(), mask);
  expect_close(losses.flatten(), layout()["rtc"]["losses"], 1e-4, 1e-4, "per-element losses with the clean prefix");
  // The prefix's losses are (noise - action)² minus a prediction: not zero, but left out of the mean.
  const double loss = policy->forward(batch, noise(), flow_time(), mask).loss.item<double>();
  expect_close(loss, layout()["loss"]["loss"].get<double>(), 1e-5, 1e-6, "postfix mean");
}

// forward(batch) draws noise, time and then the delays as LeRobot does (normal noise, the Beta
// time, then torch.randint(0, max + 1, (B,))): the same draws made by hand give the same loss.
TEST_F(PiTrainedRtcReference, PolicyForwardDrawsTheDelaysAfterNoiseAndTime) {
  auto policy = make_policy(layout());
  fill(*policy);
  policy->train();
  const Batch batch = make_batch(layout());
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  const auto delays = torch::randint(0, 3, {2}, torch::kLong);
  EXPECT_TRUE(torch::equal(torch::arange(4, torch::kLong).unsqueeze(0) < delays.unsqueeze(1), drawn_prefix_mask(layout())));
  const auto& c = policy->pi_config();
  for (int64_t seed : {0, 1, 2, 3}) {
    torch::manual_seed(seed);
    const double drawn = policy->forward(batch).loss.item<double>();
    torch::manual_seed(seed);
    auto n = torch::normal(0.0, 1.0, {2, 4, 8}, c10::nullopt, torch::TensorOptions().dtype(torch::kFloat));
    auto t = sample_beta_time(2, torch::kCPU, c.time_sampling_beta_alpha, c.time_sampling_beta_beta,
                              c.time_sampling_scale, c.time_sampling_offset);
    auto d = torch::randint(0, 3, {2}, torch::kLong);
    auto mask = torch::arange(4, torch::kLong).unsqueeze(0) < d.unsqueeze(1);
    EXPECT_EQ(drawn, policy->forward(batch, n, t, mask).loss.item<double>()) << "seed " << seed << " delays " << d;
  }
}

// Mode "trained" at inference: the first inference_delay actions of the chunk are the previous
// chunk's (held clean, time 0, while the rest is denoised), with delay 0 the plain chunk.
TEST_F(PiTrainedRtcReference, TrainedModeChunkWithAHardPrefix) {
  auto policy = make_policy(layout());
  fill(*policy);
  RtcSettings trained;
  trained.trained = true;
  policy->set_rtc(trained);
  const Batch batch = make_batch(layout());
  RtcGuidance g;
  g.prev_chunk_left_over = testing::formula_tensor(400, {2, 3, 4}, 1.0);
  expect_close(g.prev_chunk_left_over.flatten(), layout()["rtc"]["prev_chunk_left_over"], 1e-6, 1e-7, "leftover");
  g.inference_delay = 2;
  const auto chunk = policy->predict_action_chunk_rtc(batch, g, noise());
  expect_close(chunk.flatten(), layout()["rtc"]["chunk"], 1e-4, 1e-4, "trained-mode chunk");
  EXPECT_TRUE(torch::equal(chunk.narrow(1, 0, 2), g.prev_chunk_left_over.narrow(1, 0, 2)));
  g.inference_delay = 0;
  expect_close(policy->predict_action_chunk_rtc(batch, g, noise()).flatten(), layout()["rtc"]["chunk_delay0"], 1e-4,
               1e-4, "trained mode, delay 0");
  g.inference_delay = 3;  // above rtc_training_max_delay 2: LeRobot refuses it
  EXPECT_THROW(policy->predict_action_chunk_rtc(batch, g, noise()), Error);
  EXPECT_EQ(policy->pi_config().rtc_config["mode"], "trained");
}

// Mode "trained" on a π0.5 trained without it is refused, as LeRobot's RTCProcessor refuses it.
TEST_F(PiTrainedRtcReference, TrainedModeNeedsATrainedPolicy) {
  auto plain = testing::make_pi_policy("pi05", layout()["config"]["tiny"], [](PiConfigBase& c) {
    static_cast<PI05Config&>(c).rtc_training_max_delay = 0;
  });
  RtcSettings trained;
  trained.trained = true;
  EXPECT_THROW(plain->set_rtc(trained), Error);
  EXPECT_THROW(testing::make_pi_policy("pi05", layout()["config"]["tiny"],
                                       [](PiConfigBase& c) { static_cast<PI05Config&>(c).rtc_training_max_delay = 4; }),
               Error);  // LeRobot's 0 <= delay < chunk_size
}

}  // namespace
}  // namespace lerobot
