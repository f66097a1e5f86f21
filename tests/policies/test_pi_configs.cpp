// PI0Config / PI05Config against LeRobot 0.6.2's own classes: tests/policies/data/
// pi_configs_reference.json (scripts/python_lerobot/pi_configs_reference.py) holds the config.json
// LeRobot writes for each config (defaults, one variant each), its presets, delta indices and the
// settings its __post_init__ refuses.
#include <gtest/gtest.h>

#include "lerobot/common/config/config.h"
#include "lerobot/common/error.h"
#include "lerobot/policies/pi0/configuration_pi0.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/policies/pretrained_io.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

const Json& ref() { return testing::reference_json("pi_configs"); }

// Key for key in order, value for value; the first difference is named.
void expect_same_json(const Json& ours, const Json& theirs, const std::string& path) {
  if (ours.is_object() && theirs.is_object()) {
    std::vector<std::string> ok, tk;
    for (auto it = ours.begin(); it != ours.end(); ++it) ok.push_back(it.key());
    for (auto it = theirs.begin(); it != theirs.end(); ++it) tk.push_back(it.key());
    ASSERT_EQ(ok, tk) << "keys of " << path;
    for (const auto& k : tk) expect_same_json(ours[k], theirs[k], path + "." + k);
    return;
  }
  if (ours.is_number() && theirs.is_number()) {
    EXPECT_EQ(ours.is_number_float(), theirs.is_number_float()) << path << ": " << ours << " vs " << theirs;
    EXPECT_EQ(ours.get<double>(), theirs.get<double>()) << path;
    return;
  }
  EXPECT_EQ(ours, theirs) << path;
}

// The script's features: a camera and a 7-value state in, a 7-value action out.
template <class C>
void set_features(C& c) {
  c.input_features = {{"observation.images.top", {"VISUAL", {3, 96, 128}}}, {"observation.state", {"STATE", {7}}}};
  c.input_feature_order = {"observation.images.top", "observation.state"};
  c.output_features = {{"action", {"ACTION", {7}}}};
}

// LeRobot resolves device None to the detected one ("cpu" there) as the config is built, and its
// push_to_hub defaults to true (ours false, see policy_config.cpp).
template <class C>
void as_lerobot_builds_it(C& c) {
  c.device = "cpu";
  c.push_to_hub = true;
}

Json dump(const PolicyConfig& c) { return Json::parse(policy_config_json(c)); }

TEST(PiConfigs, Pi0DefaultsDumpAsLeRobot) {
  PI0Config bare;
  as_lerobot_builds_it(bare);
  bare.validate();
  bare.validate_features();  // adds observation.state (32) and action (32)
  expect_same_json(dump(bare), ref()["pi0"]["bare_default"]["config"], "pi0.bare_default");
  PI0Config c;
  as_lerobot_builds_it(c);
  set_features(c);
  c.validate_features();
  expect_same_json(dump(c), ref()["pi0"]["default"]["config"], "pi0.default");
}

TEST(PiConfigs, Pi05DefaultsDumpAsLeRobot) {
  PI05Config bare;
  as_lerobot_builds_it(bare);
  bare.validate();
  bare.validate_features();
  expect_same_json(dump(bare), ref()["pi05"]["bare_default"]["config"], "pi05.bare_default");
  PI05Config c;
  as_lerobot_builds_it(c);
  set_features(c);
  c.validate_features();
  expect_same_json(dump(c), ref()["pi05"]["default"]["config"], "pi05.default");
}

TEST(PiConfigs, Pi0VariantDumpsAsLeRobot) {
  PI0Config c;  // the script's PI0_VARIANT, field by field
  set_features(c);
  c.paligemma_variant = "gemma_300m";
  c.action_expert_variant = "gemma_2b";
  c.dtype = "bfloat16";
  c.chunk_size = 20;
  c.n_action_steps = 8;
  c.max_state_dim = 24;
  c.max_action_dim = 16;
  c.num_inference_steps = 5;
  c.time_sampling_beta_alpha = 2.0;
  c.time_sampling_beta_beta = 1.5;
  c.time_sampling_scale = 0.9;
  c.time_sampling_offset = 0.05;
  c.min_period = 0.01;
  c.max_period = 2.0;
  c.use_relative_actions = true;
  c.relative_exclude_joints = {"gripper", "wrist_roll"};
  c.action_feature_names = std::vector<std::string>{"joint_0", "joint_1", "joint_2", "joint_3",
                                                    "joint_4", "joint_5", "gripper"};
  c.rtc_config = Json{{"enabled", true},    {"mode", "guided"}, {"prefix_attention_schedule", "LINEAR"},
                      {"max_guidance_weight", 5.0}, {"execution_horizon", 8}, {"debug", false},
                      {"debug_maxlen", 100}};
  c.image_resolution = {192, 256};
  c.empty_cameras = 2;
  c.gradient_checkpointing = true;
  c.compile_mode = "reduce-overhead";
  c.device = "cpu";
  c.freeze_vision_encoder = true;
  c.train_expert_only = true;
  c.optimizer_lr = 1e-4;
  c.optimizer_betas = {0.8, 0.9};
  c.optimizer_eps = 1e-6;
  c.optimizer_weight_decay = 0.001;
  c.optimizer_grad_clip_norm = 0.5;
  c.scheduler_warmup_steps = 100;
  c.scheduler_decay_steps = 3000;
  c.scheduler_decay_lr = 1e-6;
  c.tokenizer_max_length = 64;
  c.use_amp = true;
  c.repo_id = "user/pi0_test";
  c.tags = std::vector<std::string>{"a", "b"};
  c.license = "mit";
  c.private_ = true;
  c.validate();
  c.validate_features();  // two empty cameras of (3, 192, 256)
  expect_same_json(dump(c), ref()["pi0"]["variant"]["config"], "pi0.variant");
}

TEST(PiConfigs, Pi05VariantDumpsAsLeRobot) {
  PI05Config c;  // the script's PI05_VARIANT
  set_features(c);
  c.device = "cpu";
  c.dtype = "bfloat16";
  c.chunk_size = 16;
  c.n_action_steps = 10;
  c.use_visual_memory = true;
  c.use_proprioceptive_memory = true;
  c.memory_frames = 3;
  c.memory_stride = 10;
  c.memory_temporal_attention_every = 2;
  c.max_state_dim = 8;
  c.max_action_dim = 8;
  c.num_inference_steps = 4;
  c.use_relative_actions = true;
  c.relative_exclude_joints = {};
  c.rtc_config = Json{{"enabled", true},    {"mode", "trained"},     {"prefix_attention_schedule", "EXP"},
                      {"max_guidance_weight", 10.0}, {"execution_horizon", 6}, {"debug", false},
                      {"debug_maxlen", 100}};
  c.rtc_training_max_delay = 5;
  c.image_resolution = {256, 256};
  c.empty_cameras = 1;
  c.tokenizer_max_length = 120;
  c.normalization_mapping_ = Json{{"VISUAL", "IDENTITY"}, {"STATE", "MEAN_STD"}, {"ACTION", "MIN_MAX"}};
  c.gradient_checkpointing = true;
  c.freeze_vision_encoder = true;
  c.optimizer_lr = 5e-5;
  c.scheduler_decay_steps = 10000;
  c.validate();  // trained RTC is accepted for pi05
  c.validate_features();
  expect_same_json(dump(c), ref()["pi05"]["variant"]["config"], "pi05.variant");
  const auto mapping = c.normalization_mapping();
  EXPECT_EQ(mapping.at("ACTION"), "MIN_MAX");
}

// LeRobot's config.json is read (as load_policy_config reads it) and written back unchanged.
template <class C>
void round_trip(const std::string& policy, const std::string& name) {
  const Json& theirs = ref()[policy][name]["config"];
  C c;
  apply_json(c, theirs, "config.json");
  c.validate();
  for (auto it = theirs["input_features"].begin(); it != theirs["input_features"].end(); ++it)
    c.input_feature_order.push_back(it.key());
  expect_same_json(dump(c), theirs, policy + "." + name + " read back");
}

TEST(PiConfigs, LeRobotConfigJsonReadsBackIdentically) {
  for (const char* name : {"bare_default", "default", "variant"}) {
    round_trip<PI0Config>("pi0", name);
    round_trip<PI05Config>("pi05", name);
  }
}

// Each setting LeRobot's __post_init__ refuses is refused here, naming the field; the accepted
// ones are accepted.
template <class C>
void check_errors(const std::string& policy) {
  const Json& cases = ref()[policy]["errors"];
  ASSERT_GE(cases.size(), 4u);
  for (const auto& cs : cases) {
    C c;
    apply_json(c, cs["kwargs"], "case");
    const bool lerobot_refuses = !cs["error"].is_null();
    bool refused = false;
    try {
      c.validate();
    } catch (const Error& e) {
      refused = true;
      bool names_a_field = false;
      for (auto it = cs["kwargs"].begin(); it != cs["kwargs"].end(); ++it)
        names_a_field |= e.where() == "policy." + it.key();
      EXPECT_TRUE(names_a_field) << cs["kwargs"] << " refused at " << e.where() << ": " << e.problem();
      EXPECT_FALSE(e.fix().empty() && e.problem().empty());
    }
    EXPECT_EQ(refused, lerobot_refuses) << policy << " " << cs["kwargs"] << " (LeRobot: " << cs["error"] << ")";
  }
}

TEST(PiConfigs, ValidationRefusesWhatLeRobotRefuses) {
  check_errors<PI0Config>("pi0");
  check_errors<PI05Config>("pi05");
  PI0Config c;  // ours on top: sizes, image_resolution, betas, normalization modes
  c.image_resolution = {224};
  EXPECT_THROW(c.validate(), Error);
  c = PI0Config();
  c.chunk_size = 0;
  c.n_action_steps = 0;
  EXPECT_THROW(c.validate(), Error);
  c = PI0Config();
  c.normalization_mapping_["STATE"] = "MEANSTD";
  EXPECT_THROW(c.validate(), Error);
  c = PI0Config();
  c.rtc_config = Json{{"max_guidance_weight", 0.0}};
  EXPECT_THROW(c.validate(), Error);
}

std::string refusal_where(PolicyConfig& c) {
  try {
    c.validate();
  } catch (const Error& e) {
    return e.where();
  }
  return "";
}

TEST(PiConfigs, RefusedFieldsAreRefusedByName) {
  PI0Config c;
  c.compile_model = true;  // torch.compile: parsed, never silently ignored
  EXPECT_EQ(refusal_where(c), "policy.compile_model");
  PI05Config c5;
  c5.compile_model = true;
  EXPECT_EQ(refusal_where(c5), "policy.compile_model");
  PI0Config trained;  // trained RTC is a pi05 option
  trained.rtc_config = Json{{"mode", "trained"}};
  EXPECT_EQ(refusal_where(trained), "policy.rtc_config.mode");
  // A key LeRobot's PI0Config does not have (SmolVLA's, π0.5's) is refused by name, never dropped.
  PI0Config unknown;
  for (const char* key : {"use_delta_joint_actions_aloha", "rtc_training_max_delay", "memory_frames"}) {
    try {
      apply_json(unknown, Json{{key, 1}}, "config.json");
      ADD_FAILURE() << key << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

template <class C>
void check_presets(const std::string& policy, const std::string& name, C c) {
  const Json& r = ref()[policy][name];
  apply_json(c, r["config"], "config.json");
  const auto p = c.training_preset();
  ASSERT_TRUE(p && p->scheduler);
  const Json opt = {{"type", p->optimizer.type},
                    {"lr", p->optimizer.lr},
                    {"weight_decay", p->optimizer.weight_decay},
                    {"grad_clip_norm", p->optimizer.grad_clip_norm},
                    {"betas", p->optimizer.betas},
                    {"eps", p->optimizer.eps}};
  expect_same_json(opt, r["optimizer"], policy + "." + name + ".optimizer");
  const Json sch = {{"type", p->scheduler->type},
                    {"num_warmup_steps", p->scheduler->num_warmup_steps},
                    {"num_decay_steps", p->scheduler->num_decay_steps},
                    {"peak_lr", p->scheduler->peak_lr},
                    {"decay_lr", p->scheduler->decay_lr}};
  expect_same_json(sch, r["scheduler"], policy + "." + name + ".scheduler");
  EXPECT_EQ(Json(c.observation_delta_indices().has_value() ? Json(*c.observation_delta_indices()) : Json(nullptr)),
            r["observation_delta_indices"]);
  EXPECT_EQ(Json(*c.action_delta_indices()), r["action_delta_indices"]);
}

TEST(PiConfigs, PresetsAndDeltaIndicesAsLeRobot) {
  for (const char* name : {"default", "variant"}) {
    check_presets("pi0", name, PI0Config());
    check_presets("pi05", name, PI05Config());
    PI05Config c;
    apply_json(c, ref()["pi05"][name]["config"], "config.json");
    auto as_json = [](const std::optional<std::vector<int64_t>>& v) { return v ? Json(*v) : Json(nullptr); };
    EXPECT_EQ(as_json(c.image_observation_delta_indices()), ref()["pi05"][name]["image_observation_delta_indices"]);
    EXPECT_EQ(as_json(c.state_observation_delta_indices()), ref()["pi05"][name]["state_observation_delta_indices"]);
  }
}

}  // namespace
}  // namespace lerobot
