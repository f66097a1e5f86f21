// π0.5's MEM observation memory against Python LeRobot 0.6.2's own code at tiny sizes:
// tests/policies/data/pi_mem_reference.json, written by scripts/python_lerobot/pi_mem_reference.py
// (pi_reference.py's tiny π0.5 with a 3-layer SigLIP, memory_frames 3, memory_stride 2,
// memory_temporal_attention_every 2: layer 0 plain on every frame, layer 1 space-time and the last
// one, layer 2 plain on the current frame only). Layouts: "mem" (both memories, two cameras, one
// resized per frame), "mem_visual", "mem_proprio". Compared: the state dict (proprio_history_proj),
// the preprocessed clips and frame masks, the video embedding, embed_prefix, per-element losses,
// the loss and every gradient, the action chunk; the inference memory's sampling and select_action.
#include <gtest/gtest.h>

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/observation_memory.h"
#include "lerobot/policies/pi/modeling_pi.h"
#include "lerobot/policies/pi/pi_sizing.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/vlm/video_memory.h"
#include "pi_test_helpers.h"
#include "reference_helpers.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

using testing::expect_close;
using testing::formula_tensor;

const Json& mem_reference() { return testing::reference_json("pi_mem"); }
const Json& mem_layout(const std::string& name) { return mem_reference()["layouts"][name]; }
const Json& mem_tiny(const std::string& name) { return mem_layout(name)["config"]["tiny"]; }

torch::Tensor mem_values(const Json& values) { return torch::tensor(values.get<std::vector<double>>(), torch::kDouble); }

std::unique_ptr<PiPolicy> mem_policy(const std::string& name) {
  auto policy = testing::make_pi_policy("pi05", mem_tiny(name));
  testing::pi_fill(*policy);
  return policy;
}

// A JSON list of bools or 0/1 numbers: rows of a (rows, n) mask, or one (n,) row.
torch::Tensor bool_rows(const Json& rows) {
  std::vector<uint8_t> bits;
  auto bit = [](const Json& v) { return static_cast<uint8_t>(v.is_boolean() ? v.get<bool>() : v.get<double>() != 0); };
  if (!rows.empty() && !rows[0].is_array()) {
    for (const auto& v : rows) bits.push_back(bit(v));
    return torch::tensor(bits, torch::kUInt8).to(torch::kBool);
  }
  for (const auto& row : rows)
    for (const auto& v : row) bits.push_back(bit(v));
  return torch::tensor(bits, torch::kUInt8).view({static_cast<int64_t>(rows.size()), -1}).to(torch::kBool);
}

// The script's mem_inputs: clips (B, 3, C, H, W) with `_is_pad` per camera, the state history
// (B, 3, 5) with its `_is_pad`, as the dataset delivers them with the config's delta indices.
Batch mem_batch(const std::string& name) {
  const Json& tiny = mem_tiny(name);
  Batch batch = testing::pi_batch(tiny);
  const int64_t b = tiny["batch"], frames = tiny["memory_frames"];
  if (tiny.value("use_visual_memory", false)) {
    int64_t c = 0;
    for (const auto& [cam, shape] : tiny["cameras"].items()) {
      std::vector<int64_t> s = {b, frames};
      for (auto d : shape) s.push_back(d.get<int64_t>());
      batch[cam] = formula_tensor(100 + c, s, 0.5, 0.5);
      batch[cam + "_is_pad"] = bool_rows(mem_reference()["img_pad"][c]);
      ++c;
    }
  }
  if (tiny.value("use_proprioceptive_memory", false)) {
    batch["observation.state"] = formula_tensor(200, {b, frames, tiny["state_dim"].get<int64_t>()}, 1.0);
    batch["observation.state_is_pad"] = bool_rows(mem_reference()["state_pad"]);
  }
  return batch;
}

class PiMemReference : public ::testing::TestWithParam<std::string> {
 protected:
  const Json& layout() const { return mem_layout(GetParam()); }
};

TEST_P(PiMemReference, StateDictNamesShapesAndTrainableParameters) {
  auto policy = mem_policy(GetParam());
  std::vector<std::pair<std::string, bool>> ours;
  for (const auto& p : policy->named_parameters(true))
    ours.emplace_back(testing::pi_reference_name(p.key()), p.value().requires_grad());
  const auto& ref = layout()["parameters"];
  ASSERT_EQ(ours.size(), ref.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].first, ref[i][0].get<std::string>()) << "parameter " << i;
    EXPECT_EQ(ours[i].second, ref[i][1].get<bool>()) << ours[i].first;
  }
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [name, t] : policy->state_dict()) shapes[testing::pi_reference_name(name)] = t.sizes().vec();
  ASSERT_EQ(shapes.size(), layout()["state_dict"].size());
  for (const auto& e : layout()["state_dict"]) EXPECT_EQ(shapes[e[0].get<std::string>()], e[1].get<std::vector<int64_t>>()) << e[0];
  const bool proprio = mem_tiny(GetParam()).value("use_proprioceptive_memory", false);
  EXPECT_EQ(shapes.count("model.proprio_history_proj.weight"), proprio ? 1u : 0u);
}

TEST_P(PiMemReference, ClipsPrefixLossesGradientsAndChunk) {
  auto policy = mem_policy(GetParam());
  policy->train();
  const Batch batch = mem_batch(GetParam());
  const auto& st = layout()["stages"];
  const auto in = policy->prepare_inputs(batch);
  ASSERT_EQ(in.images.size(), st["images"].size());
  for (size_t i = 0; i < in.images.size(); ++i) {
    EXPECT_EQ(in.images[i].sizes().vec(), st["images"][i]["shape"].get<std::vector<int64_t>>()) << "camera " << i;
    expect_close(in.images[i].to(torch::kDouble).sum().item<double>(), st["images"][i]["sum"].get<double>(), 1e-5, 1e-3,
                 "camera " + std::to_string(i) + " sum");
    EXPECT_TRUE(torch::equal(in.image_masks[i], bool_rows(st["img_masks"][i]))) << "camera " << i << " mask";
  }
  if (st.contains("states")) {
    expect_close(in.states.to(torch::kDouble).sum().item<double>(), st["states"]["sum"].get<double>(), 1e-6, 1e-5, "states");
    EXPECT_TRUE(torch::equal(in.state_masks, bool_rows(st["state_masks"])));
  } else {
    EXPECT_FALSE(in.states.defined());
  }
  auto& model = *policy->model;
  {
    torch::NoGradGuard no_grad;
    const auto& tiny = mem_tiny(GetParam());
    auto emb = in.images[0].dim() == 5
                   ? model.paligemma_with_expert->embed_video(in.images[0], in.image_masks[0],
                                                              tiny["memory_temporal_attention_every"])
                   : model.paligemma_with_expert->embed_image(in.images[0]);
    EXPECT_EQ(emb.sizes().vec(), st["image0_embedding_shape"].get<std::vector<int64_t>>());
    const double diff = (emb.flatten().to(torch::kDouble) - mem_values(st["image0_embedding"])).abs().max().item<double>();
    std::cout << GetParam() << ": camera 0 embedding max |ours - LeRobot| " << diff << "\n";
    expect_close(emb.flatten(), st["image0_embedding"], 1e-4, 1e-5, "camera 0 embedding");
    auto prefix = model.embed_prefix(in);
    expect_close(prefix.embs.to(torch::kDouble).sum().item<double>(), st["prefix"]["sum"].get<double>(), 1e-5, 1e-3, "prefix sum");
    expect_close(prefix.embs.to(torch::kDouble).abs().sum().item<double>(), st["prefix"]["abs_sum"].get<double>(), 1e-5, 1e-3,
                 "prefix |sum|");
    EXPECT_TRUE(torch::equal(prefix.pad_masks, bool_rows(st["prefix"]["pad_masks"])));
    auto actions = torch::nn::functional::pad(batch.at("action"), torch::nn::functional::PadFuncOptions({0, 4}));
    auto losses = model.forward(in, actions, testing::pi_noise(tiny), testing::pi_flow_time(tiny));
    std::cout << GetParam() << ": per-element losses max |ours - LeRobot| "
              << (losses.flatten().to(torch::kDouble) - mem_values(layout()["losses"])).abs().max().item<double>() << "\n";
    expect_close(losses.flatten(), layout()["losses"], 1e-4, 1e-4, "per-element losses");
  }
  const auto& tiny = mem_tiny(GetParam());
  auto out = policy->forward(batch, testing::pi_noise(tiny), testing::pi_flow_time(tiny));
  expect_close(out.loss.item<double>(), layout()["loss"].get<double>(), 1e-5, 1e-6, "loss");
  out.loss.backward();
  std::map<std::string, torch::Tensor> params;
  std::vector<std::string> without;
  for (const auto& p : policy->named_parameters(true)) {
    const auto name = testing::pi_reference_name(p.key());
    params[name] = p.value();
    if (!p.value().grad().defined()) without.push_back(name);
  }
  std::sort(without.begin(), without.end());
  EXPECT_EQ(without, layout()["no_grad"].get<std::vector<std::string>>());
  double worst = 0;
  for (const auto& [name, ref] : layout()["grads"].items()) {
    auto it = params.find(name);
    if (it == params.end() || !it->second.grad().defined()) {
      ADD_FAILURE() << name << " has no gradient here";
      continue;
    }
    const auto g = it->second.grad().to(torch::kDouble);
    const double abs_sum = ref["abs_sum"], got = g.abs().sum().item<double>();
    worst = std::max(worst, std::abs(got - abs_sum) / std::max(abs_sum, 1e-5));
    expect_close(got, abs_sum, 2e-4, 1e-5, name + " gradient |sum|");
    expect_close(g.sum().item<double>(), ref["sum"].get<double>(), 0, 2e-4 * abs_sum + 1e-5, name + " gradient sum");
  }
  std::cout << GetParam() << ": loss " << out.loss.item<double>() << " (LeRobot " << layout()["loss"].get<double>()
            << "), gradient |sum| worst relative difference " << worst << "\n";
  auto chunk = policy->predict_action_chunk(batch, testing::pi_noise(tiny));
  std::cout << GetParam() << ": chunk max |ours - LeRobot| "
            << (chunk.flatten().to(torch::kDouble) - mem_values(layout()["chunk"])).abs().max().item<double>() << "\n";
  expect_close(chunk.flatten(), layout()["chunk"], 1e-4, 1e-4, "chunk");
}

INSTANTIATE_TEST_SUITE_P(Layouts, PiMemReference, ::testing::Values("mem", "mem_visual", "mem_proprio"));

TEST(PiMemParts, TemporalEmbeddingAndCausalMaskAreLeRobots) {
  const auto emb = temporal_sinusoidal_embedding(3, 32, torch::kCPU);
  expect_close(emb.flatten(), mem_reference()["temporal_embedding"], 1e-6, 1e-6, "temporal embedding");
  EXPECT_TRUE((emb[2] == 0).all().item<bool>()) << "the current frame's row is zero";
  const auto& cm = mem_reference()["causal_mask"];
  const auto allowed = causal_temporal_allowed(bool_rows(cm["frame_mask"]));
  for (int64_t b = 0; b < 2; ++b) EXPECT_TRUE(torch::equal(allowed[b], bool_rows(cm["allowed"][b]))) << "row " << b;
}

// LeRobot's inference memory: frames sampled by age from the newest (ages 4, 2, 0 here), the
// history filled with the first observation, frames older than the steps seen marked padding,
// and reset() starting over. The values are the step numbers the script fed.
TEST(PiMemInference, SamplesByAgeFromTheNewestAndPadsUntilSeenAsLeRobot) {
  const auto& memory = mem_layout("mem")["memory"];
  ObservationMemory mem({"observation.images.top", "observation.state"}, 3, 2);
  EXPECT_EQ(mem.history_length(), memory["history_length"].get<int64_t>());
  for (const auto& step : memory["steps"]) {
    const int64_t s = step["step"];
    if (s == 100) mem.clear();
    Batch obs{{"observation.images.top", torch::full({2, 3, 32, 32}, static_cast<double>(s))},
              {"observation.state", torch::full({2, 5}, static_cast<double>(s))}};
    const Batch out = mem.record_and_sample(obs);
    const auto& state = out.at("observation.state");
    ASSERT_EQ(state.sizes().vec(), (std::vector<int64_t>{2, 3, 5}));
    EXPECT_EQ(out.at("observation.images.top").sizes().vec(), step["camera_shape"].get<std::vector<int64_t>>());
    expect_close(state.select(0, 0).select(1, 0), step["state"], 0, 0, "state at step " + std::to_string(s));
    expect_close(out.at("observation.images.top").select(0, 0).select(1, 0).select(1, 0).select(1, 0), step["camera"], 0, 0,
                 "camera at step " + std::to_string(s));
    EXPECT_TRUE(torch::equal(out.at("observation.state_is_pad")[0], bool_rows(Json::array({step["state_is_pad"]}))[0])) << s;
    EXPECT_TRUE(torch::equal(out.at("observation.images.top_is_pad")[1], bool_rows(Json::array({step["camera_is_pad"]}))[0]))
        << s;
  }
  // A batch of another size within an episode is refused, as LeRobot refuses it.
  EXPECT_THROW(mem.record_and_sample({{"observation.state", torch::zeros({3, 5})}}), Error);
}

// select_action with n_action_steps 1 on four observations: each chunk is predicted from the
// memory's clips and state history (LeRobot's select_action, noise fixed to the script's).
TEST(PiMemInference, SelectActionMatchesLeRobotStepByStep) {
  const Json& tiny = mem_tiny("mem");
  auto policy = testing::make_pi_policy("pi05", tiny, [](PiConfigBase& c) { c.n_action_steps = 1; });
  testing::pi_fill(*policy);
  const auto noise = testing::pi_noise(tiny);
  policy->set_chunk_source([&](const Batch& b) { return policy->predict_action_chunk(b, noise); });
  policy->reset();
  const auto& want = mem_layout("mem")["select_action"];
  double worst = 0;
  for (int64_t step = 0; step < static_cast<int64_t>(want.size()); ++step) {
    Batch obs = testing::pi_batch(tiny);
    obs.erase("action");
    int64_t c = 0;
    for (const auto& [cam, shape] : tiny["cameras"].items()) {
      std::vector<int64_t> s = {2};
      for (auto d : shape) s.push_back(d.get<int64_t>());
      obs[cam] = formula_tensor(500 + 10 * step + c++, s, 0.5, 0.5);
    }
    obs["observation.state"] = formula_tensor(600 + step, {2, 5}, 1.0);
    auto action = policy->select_action(obs);
    worst = std::max(worst, (action.flatten().to(torch::kDouble) - mem_values(want[step])).abs().max().item<double>());
    expect_close(action.flatten(), want[step], 1e-4, 1e-4, "action at step " + std::to_string(step));
  }
  std::cout << "select_action over " << want.size() << " steps: max |ours - LeRobot| " << worst << "\n";
}

// Checkpoints both ways: model.proprio_history_proj.{weight,bias} are written as LeRobot's state
// dict has them and read back; a checkpoint without them (a base without MEM) loads with the
// projection kept as initialized (LeRobot's _prepare_pretrained_state_dict).
TEST(PiMemCheckpoint, ProprioHistoryProjRoundTripsAndABaseWithoutItLoads) {
  auto policy = mem_policy("mem");
  const auto dir = testing::fresh_temp_dir("pi_mem_checkpoint");
  save_pretrained(*policy, dir);
  const TensorMap file = load_safetensors(dir / "model.safetensors");
  ASSERT_TRUE(file.count("model.proprio_history_proj.weight"));
  auto loaded = testing::make_pi_policy("pi05", mem_tiny("mem"));  // unfilled: every weight from the file
  loaded->load_state_dict(loaded->adapt_checkpoint_keys(file, "model.safetensors"), "model.safetensors");
  const auto want = policy->state_dict(), got = loaded->state_dict();
  for (const char* key : {"model.proprio_history_proj.weight", "model.proprio_history_proj.bias"}) {
    ASSERT_TRUE(got.count(key)) << key;
    EXPECT_TRUE(torch::equal(got.at(key), want.at(key))) << key;
  }
  EXPECT_EQ(got.at("model.proprio_history_proj.weight").sizes().vec(), (std::vector<int64_t>{64, 8}));
  // Without the projection in the file.
  auto fresh = mem_policy("mem");
  TensorMap base = policy->state_dict();
  base.erase("model.proprio_history_proj.weight");
  base.erase("model.proprio_history_proj.bias");
  const auto init = fresh->state_dict().at("model.proprio_history_proj.weight").clone();
  fresh->load_state_dict(fresh->adapt_checkpoint_keys(base, "base.safetensors"), "base.safetensors");
  EXPECT_TRUE(torch::equal(fresh->state_dict().at("model.proprio_history_proj.weight"), init));
}

// Gradient checkpointing (the vision tower's layers, space-time ones included, recomputed in
// backward) gives the gradients of the plain run.
TEST(PiMemCheckpointing, RecomputedVisionLayersGiveThePlainGradients) {
  const Json& tiny = mem_tiny("mem");
  std::map<std::string, torch::Tensor> plain;
  for (bool recompute : {false, true}) {
    auto policy = testing::make_pi_policy("pi05", tiny, [&](PiConfigBase& c) { c.gradient_checkpointing = recompute; });
    testing::pi_fill(*policy);
    policy->train();
    auto out = policy->forward(mem_batch("mem"), testing::pi_noise(tiny), testing::pi_flow_time(tiny));
    out.loss.backward();
    int64_t compared = 0;
    for (const auto& p : policy->named_parameters(true)) {
      if (!p.value().grad().defined()) continue;
      if (!recompute) {
        plain[p.key()] = p.value().grad().clone();
        continue;
      }
      ASSERT_TRUE(plain.count(p.key())) << p.key();
      EXPECT_TRUE(torch::allclose(p.value().grad(), plain.at(p.key()), 1e-5, 1e-7)) << p.key();
      ++compared;
    }
    if (recompute) EXPECT_EQ(compared, static_cast<int64_t>(plain.size()));
  }
}

// estimate's parameter count (pi_size, without building the model) includes proprio_history_proj:
// equal to the built tiny policy's, and LeRobot's state dict's.
TEST(PiMemSizing, ParameterCountsIncludeTheProprioProjection) {
  const Json& tiny = mem_tiny("mem");
  auto policy = testing::make_pi_policy("pi05", tiny);
  int64_t built = 0;
  for (const auto& p : policy->parameters()) built += p.numel();
  int64_t lerobot = 0;
  for (const auto& e : mem_layout("mem")["state_dict"]) {
    int64_t n = 1;
    for (auto d : e[1]) n *= d.get<int64_t>();
    lerobot += n;
  }
  EXPECT_EQ(built, lerobot);
  EXPECT_TRUE(pi_proprio_memory(policy->pi_config()));
  const auto arch = testing::pi_tiny_arch(tiny);
  const auto with = pi_size(arch, true, 8, 8, false, false, true), without = pi_size(arch, true, 8, 8, false, false, false);
  EXPECT_EQ(with.parameters(), built);
  EXPECT_EQ(with.parameters() - without.parameters(), 8 * 64 + 64);
}

// LeRobot's bfloat16 mix with both memories: the vision path and proprio_history_proj stay float32
// (its cast touches paligemma_with_expert only), the loss within 1 % of float32's.
TEST(PiMemBf16, TheMixedPrecisionLossFollowsFloat32) {
  const Json& tiny = mem_tiny("mem");
  std::vector<double> losses;
  for (const char* dtype : {"float32", "bfloat16"}) {
    auto policy = testing::make_pi_policy("pi05", tiny, [&](PiConfigBase& c) { c.dtype = dtype; });
    testing::pi_fill(*policy);
    policy->train();
    EXPECT_EQ(policy->model->proprio_history_proj->weight.scalar_type(), torch::kFloat) << dtype;
    auto out = policy->forward(mem_batch("mem"), testing::pi_noise(tiny), testing::pi_flow_time(tiny));
    out.loss.backward();
    EXPECT_TRUE(policy->model->proprio_history_proj->weight.grad().defined()) << dtype;
    losses.push_back(out.loss.item<double>());
  }
  std::cout << "MEM loss float32 " << losses[0] << ", bfloat16 " << losses[1] << "\n";
  expect_close(losses[1], losses[0], 1e-2, 0, "bfloat16 loss");
}

// LoRA with proprioceptive memory: LeRobot's default targets and modules_to_save (the projection is
// new to a base checkpoint, so it trains in full and is saved beside the adapters).
TEST(PiMemLora, TheProprioProjectionTrainsInFullAndIsSavedWithTheAdapters) {
  const Json& want = mem_layout("mem")["peft_defaults"];
  const auto defaults = lora::default_peft_targets("pi05", true);
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->target_modules, want["target_modules"]);
  EXPECT_EQ(defaults->modules_to_save, want["modules_to_save"].get<std::vector<std::string>>());
  auto policy = mem_policy("mem");
  lora::LoraSettings s;
  s.target_regex = defaults->target_modules.get<std::string>();
  s.modules_to_save = defaults->modules_to_save;
  s.r = 4;
  lora::inject(*policy, s);
  lora::freeze_base(*policy, s);
  EXPECT_TRUE(policy->model->proprio_history_proj->weight.requires_grad());
  EXPECT_FALSE(policy->model->time_mlp_in->weight.requires_grad());
  int64_t saved = 0;
  for (const auto& [name, t] : lora::adapter_tensors(*policy, s)) saved += name.find("proprio_history_proj") != std::string::npos;
  EXPECT_EQ(saved, 2) << "weight and bias beside the adapters";
}

// What LeRobot refuses, refused by name: a temporal layer deeper than the tower, and (with
// proprioceptive memory, whose projection takes max_state_dim inputs) a wider state.
TEST(PiMemRefusals, TemporalEveryBeyondTheTowerAndAWideStateAreUsageErrors) {
  const Json& tiny = mem_tiny("mem");
  try {
    testing::make_pi_policy("pi05", tiny, [](PiConfigBase& c) { static_cast<PI05Config&>(c).memory_temporal_attention_every = 4; });
    FAIL() << "built with memory_temporal_attention_every above the tower's depth";
  } catch (const Error& e) {
    EXPECT_NE(e.where().find("policy.memory_temporal_attention_every"), std::string::npos) << e.where();
  }
  try {
    testing::make_pi_policy("pi05", tiny, [](PiConfigBase& c) { c.max_state_dim = 3; });
    FAIL() << "built with a state wider than max_state_dim and proprioceptive memory";
  } catch (const Error& e) {
    EXPECT_NE(e.where().find("policy.max_state_dim"), std::string::npos) << e.where();
  }
}

}  // namespace
}  // namespace lerobot
