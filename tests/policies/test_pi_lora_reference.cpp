// LoRA (LeRobot 0.6.2's --peft.*, PEFT's LoraModel) on the tiny formula-filled π0 and π0.5 of
// test_pi_reference.cpp, against tests/policies/data/pi_lora/ written by
// scripts/python_lerobot/pi_lora_reference.py with LeRobot + PEFT: the targets π0's and π0.5's own
// _get_default_peft_targets give (the expert's q/v projections and the action/state/time
// projections the regex names), PEFT's names and shapes and initialisation, the loss, gradients and
// action chunk for fixed noise with formula-filled adapters, and the adapter folder both ways; π0.5
// also in LeRobot's bfloat16 mix (float32 adapters on a bfloat16 base).
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/lora/lora_linear.h"
#include "lerobot/policies/lora/lora_sizing.h"
#include "lerobot/policies/lora/peft_adapter_io.h"
#include "lerobot/policies/lora/peft_config.h"
#include "lerobot/policies/pi/modeling_pi.h"
#include "pi_test_helpers.h"
#include "reference_helpers.h"

namespace lerobot {
namespace {

using testing::expect_close;

std::string data(const std::string& rel) { return std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/" + rel; }

const Json& lora_json() {
  static const Json j = [] {
    std::ifstream in(data("pi_lora/reference.json"));
    return Json::parse(in);
  }();
  return j;
}

class PiLoraReference : public ::testing::TestWithParam<std::string> {
 protected:
  const Json& ref() const { return lora_json()["layouts"][GetParam()]; }
  const Json& base() const { return testing::reference_json("pi")["layouts"][GetParam()]; }
  const Json& tiny() const { return base()["config"]["tiny"]; }
  std::string kind() const { return base()["kind"]; }
  // π0.5 in LeRobot's bfloat16 mix: the adapters stay float32 (PEFT's autocast_adapter_dtype, and
  // here), the base computes in bfloat16, so values agree to bfloat16's precision.
  bool bf16() const { return tiny()["dtype"] == "bfloat16"; }
  double value_tol() const { return bf16() ? 5e-3 : 1e-4; }

  // The layout's policy, filled as pi_reference.py fills it.
  std::unique_ptr<PiPolicy> policy() const {
    auto p = testing::make_pi_policy(base());
    testing::pi_fill(*p);
    return p;
  }
  // What --peft.r=4 --peft.lora_alpha=8 resolves to for this policy type (its default targets).
  lora::LoraSettings settings() const {
    lora::PeftConfig c;
    c.r = ref()["r"];
    c.lora_alpha = ref()["lora_alpha"].get<int64_t>();
    return lora::resolve_peft(c, kind(), /*has_pretrained_path=*/true);
  }
  torch::Tensor chunk(PiPolicy& p) const {
    p.eval();
    torch::NoGradGuard ng;
    return p.predict_action_chunk(testing::pi_batch(tiny()), testing::pi_noise(tiny()));
  }
};

// PEFT's live name of one of our parameters: "base_model.model." + LeRobot's name, adapters under
// their adapter name ("default").
std::string peft_live_name(const std::string& ours) {
  std::string s = "base_model.model." + testing::pi_reference_name(ours);
  for (const char* ab : {".lora_A.", ".lora_B."})
    if (auto pos = s.find(ab); pos != std::string::npos) s.replace(pos, 8, std::string(ab) + "default.");
  return s;
}

// The script's fill_lora: the k-th adapter by PEFT's live names, sorted, gets t(300 + k, 0.3).
void fill_lora(PiPolicy& p, double scale) {
  std::map<std::string, torch::Tensor> by_peft;
  for (auto& item : p.named_parameters())
    if (lora::is_adapter_parameter(item.key())) by_peft[peft_live_name(item.key())] = item.value();
  torch::NoGradGuard ng;
  int64_t k = 0;
  for (auto& [name, x] : by_peft) x.copy_(testing::formula_tensor(300 + k++, x.sizes().vec(), scale));
}

TEST_P(PiLoraReference, DefaultTargetsNamesShapesAndInitialisationMatchPeft) {
  auto p = policy();
  const auto base_chunk = chunk(*p);
  const auto s = settings();
  // LeRobot's _get_default_peft_targets for this policy, as the script read it off the policy.
  EXPECT_EQ(*s.target_regex, ref()["default_targets"]["target_modules"].get<std::string>());
  EXPECT_EQ(s.modules_to_save, ref()["default_targets"]["modules_to_save"].get<std::vector<std::string>>());
  std::vector<std::string> targeted;
  for (const auto& name : lora::inject(*p, s)) targeted.push_back(testing::pi_reference_name(name));
  lora::freeze_base(*p, s);
  EXPECT_EQ(targeted, ref()["targeted_modules"].get<std::vector<std::string>>());
  std::map<std::string, std::vector<int64_t>> trainable, want;
  int64_t n_trainable = 0, n_all = 0;
  for (const auto& q : p->named_parameters()) {
    n_all += q.value().numel();
    if (!q.value().requires_grad()) continue;
    trainable[peft_live_name(q.key())] = q.value().sizes().vec();
    n_trainable += q.value().numel();
  }
  for (const auto& [k, v] : ref()["trainable"].items()) want[k] = v.get<std::vector<int64_t>>();
  EXPECT_EQ(trainable, want);
  EXPECT_EQ(n_trainable, ref()["num_trainable"].get<int64_t>());
  EXPECT_EQ(n_all, ref()["num_parameters"].get<int64_t>());
  ASSERT_TRUE(ref()["b_all_zero_at_init"].get<bool>());
  for (const auto& q : p->named_parameters())
    if (q.key().find(".lora_B.") != std::string::npos) {
      EXPECT_EQ(q.value().abs().sum().item<double>(), 0.0) << q.key();
    }
  EXPECT_DOUBLE_EQ(s.scaling(), ref()["scaling"].get<double>());
  // Adapters at PEFT's init: the base policy's actions, here and in LeRobot.
  const auto at_init = chunk(*p);
  EXPECT_TRUE(torch::equal(at_init, base_chunk));
  expect_close(at_init.flatten(), ref()["base_chunk"], value_tol(), value_tol(), "chunk at init");
}

TEST_P(PiLoraReference, LossGradientsChunkAndAdapterKeysWithFilledAdaptersMatchPeft) {
  auto p = policy();
  const auto s = settings();
  lora::inject(*p, s);
  lora::freeze_base(*p, s);
  const auto before = chunk(*p);
  fill_lora(*p, ref()["lora_fill_scale"]);
  p->train();
  auto out = p->forward(testing::pi_batch(tiny()), testing::pi_noise(tiny()), testing::pi_flow_time(tiny()));
  expect_close(out.loss.item<double>(), ref()["loss"].get<double>(), bf16() ? 1e-3 : 1e-5, 1e-6, "loss");
  out.loss.backward();
  std::map<std::string, torch::Tensor> params;
  std::vector<std::string> trainable_without;
  for (auto& q : p->named_parameters()) {
    params[peft_live_name(q.key())] = q.value();
    if (!q.value().requires_grad()) {
      EXPECT_FALSE(q.value().grad().defined()) << q.key() << " is frozen";
    } else if (!q.value().grad().defined()) {
      trainable_without.push_back(peft_live_name(q.key()));
    }
  }
  std::sort(trainable_without.begin(), trainable_without.end());
  EXPECT_EQ(trainable_without, ref()["trainable_without_grad"].get<std::vector<std::string>>());
  EXPECT_TRUE(ref()["frozen_with_grad"].empty());
  ASSERT_FALSE(ref()["grads"].empty());
  for (const auto& [name, want] : ref()["grads"].items()) {
    ASSERT_TRUE(params.count(name)) << name;
    ASSERT_TRUE(params[name].grad().defined()) << name;
    const auto g = params[name].grad().to(torch::kDouble);
    const double abs_sum = want["abs_sum"], rtol = bf16() ? 2e-2 : 2e-4;  // bf16: as PiReference (measured up to 1.8 %)
    EXPECT_EQ(g.size(0), params[name].size(0));
    EXPECT_EQ(params[name].grad().scalar_type(), torch::kFloat) << name << ": adapters are float32";
    expect_close(g.abs().sum().item<double>(), abs_sum, rtol, 1e-6, name + " gradient |sum|");
    expect_close(g.sum().item<double>(), want["sum"].get<double>(), 0, rtol * abs_sum + 1e-6, name + " gradient sum");
  }
  const auto after = chunk(*p);
  expect_close(after.flatten(), ref()["chunk"], value_tol(), value_tol(), "chunk with adapters");
  EXPECT_GT((after - before).abs().max().item<double>(), 1e-3) << "the filled adapters move the chunk";
  // adapter_model.safetensors' names, dtypes and shapes as PEFT's save_pretrained writes them.
  std::map<std::string, Json> keys, want_keys;
  for (const auto& [k, v] : lora::adapter_tensors(*p, s))
    keys[k] = Json::array({v.scalar_type() == torch::kFloat ? "F32" : "other", v.sizes().vec()});
  for (const auto& [k, v] : ref()["adapter_keys"].items()) want_keys[k] = v;
  EXPECT_EQ(keys, want_keys);
}

TEST_P(PiLoraReference, PeftWrittenAdapterFolderLoadsAndGivesItsChunk) {
  auto p = policy();
  const auto s = lora::load_adapter_folder(data("pi_lora/" + GetParam()), *p);
  EXPECT_EQ(s.r, ref()["r"].get<int64_t>());
  EXPECT_EQ(*s.target_regex, ref()["default_targets"]["target_modules"].get<std::string>());
  expect_close(chunk(*p).flatten(), ref()["chunk"], value_tol(), value_tol(), "chunk with PEFT's adapter file");
}

TEST_P(PiLoraReference, WrittenAdapterFolderIsPeftsFileForFile) {
  auto p = policy();
  const auto s = settings();
  lora::inject(*p, s);
  fill_lora(*p, ref()["lora_fill_scale"]);
  const auto dir = std::filesystem::temp_directory_path() / ("lerobot_pi_lora_" + GetParam() + std::to_string(::getpid()));
  const std::string type = kind();
  lora::save_adapter_folder(dir, *p, s, "formula-filled", type == "pi0" ? "PI0Policy" : "PI05Policy",
                            "lerobot.policies." + type + ".modeling_" + type);
  std::ifstream in(dir / "adapter_config.json");
  Json ours = Json::parse(in), theirs = ref()["adapter_config"];
  for (auto* j : {&ours, &theirs}) j->erase("peft_version");
  EXPECT_EQ(ours.dump(), theirs.dump());
  auto mine = load_safetensors(dir / "adapter_model.safetensors");
  auto peft = load_safetensors(data("pi_lora/" + GetParam() + "/adapter_model.safetensors"));
  ASSERT_EQ(mine.size(), peft.size());
  for (const auto& [k, v] : peft) {
    ASSERT_TRUE(mine.count(k)) << k;
    EXPECT_TRUE(torch::allclose(mine[k], v, 1e-6, 1e-7)) << k;
  }
  if (const char* keep = std::getenv("LEROBOT_KEEP_PI_LORA_DIR"))
    std::filesystem::copy(dir, std::string(keep) + "/" + GetParam(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove_all(dir);
}

// `estimate --peft.*` counts π's adapters without a model (lora_sizing.h): its list of Linear layers
// is the built model's, name for name and shape for shape, and what LeRobot's targets add to it is
// what PEFT added to LeRobot's model.
TEST_P(PiLoraReference, SizingWithoutAModelHasTheBuiltModelsLinearsAndPeftsCount) {
  auto p = policy();
  const auto built = lora::linear_layers(*p);
  const auto counted = lora::pi_linear_layers(testing::pi_tiny_arch(tiny()), kind() == "pi05",
                                              tiny()["max_state_dim"], tiny()["max_action_dim"]);
  ASSERT_EQ(built.size(), counted.size());
  for (size_t i = 0; i < built.size(); ++i)
    EXPECT_TRUE(built[i] == counted[i]) << built[i].name << " " << built[i].in << "x" << built[i].out << " bias "
                                        << built[i].bias << " vs " << counted[i].name << " " << counted[i].in << "x"
                                        << counted[i].out << " bias " << counted[i].bias;
  const auto c = lora::count_adapters(counted, settings());
  EXPECT_EQ(c.modules, static_cast<int64_t>(ref()["targeted_modules"].size()));
  EXPECT_EQ(c.trainable(), ref()["num_trainable"].get<int64_t>());
  EXPECT_EQ(c.adamw_bytes(), 8 * ref()["num_trainable"].get<int64_t>());
  lora::LoraSettings listed = settings();  // a list of names, PEFT's suffix match
  listed.target_regex.reset();
  listed.target_names = {"v_proj"};
  EXPECT_EQ(lora::count_adapters(counted, listed).modules,
            tiny()["vision"]["num_hidden_layers"].get<int64_t>() + tiny()["gemma"]["gemma_2b"]["depth"].get<int64_t>() +
                tiny()["gemma"]["gemma_300m"]["depth"].get<int64_t>());  // SigLIP, Gemma and expert layers
}

INSTANTIATE_TEST_SUITE_P(Layouts, PiLoraReference, ::testing::Values("pi0", "pi05", "pi05_bf16"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lerobot
