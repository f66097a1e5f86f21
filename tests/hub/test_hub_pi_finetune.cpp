// Fine-tuning π0.5 / π0 from the published bases through the Hub client: a tiny checkpoint in the
// layout of lerobot/pi05_base and lerobot/pi0_base (config.json with "type", model.safetensors with
// openpi's key names: no "model." prefix, time_mlp_* for π0 too, lm_head without embed_tokens;
// π0.5 in bfloat16 with LeRobot's float32 vision tower and norms, π0 in float32) served by the local
// Hub server under the published ids, and `train --policy.path=lerobot/pi05_base --dataset.root=...`
// from it: LeRobot's key fixing runs (its log lines), the run's weights are the served ones (the
// frozen vision tower and the never-trained lm_head bit for bit, every other weight within two
// steps' change), embed_tokens is lm_head's copy, the dtypes are the base's and the run's
// config.json says the base's type and dtype. No processor files are served: normalization stats
// come from the dataset. PaliGemma's tokenizer is served too (google/paligemma-3b-pt-224, the
// reduced Gemma tokenizer of tests/policies/data) and LEROBOT_PI_ARCH sizes the model down.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "hub_cli_helpers.h"
#include "hub_test_helpers.h"
#include "lerobot/common/safetensors.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

using testing::HubEnvironment;
using testing::run_cli;
using testing::TempDir;

Json model_repo(const std::string& id, const std::string& commit, const fs::path& dir) {
  return Json{{"type", "model"},
              {"id", id},
              {"revisions", Json::array({Json{{"commit", commit}, {"dir", dir.string()}, {"branches", {"main"}},
                                              {"tags", Json::array()}}})}};
}

// LEROBOT_PI_ARCH for the lifetime of the guard.
class ArchEnv {
 public:
  explicit ArchEnv(const fs::path& file) {
    write_file_atomic(file, R"({"vocab_size": 257152,
      "vision": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "patch_size": 8},
      "gemma": {"gemma_2b": {"width": 32, "depth": 2, "mlp_dim": 64, "num_heads": 8, "num_kv_heads": 1, "head_dim": 8},
                "gemma_300m": {"width": 16, "depth": 2, "mlp_dim": 32, "num_heads": 8, "num_kv_heads": 1, "head_dim": 8}}})");
    const char* old = std::getenv("LEROBOT_PI_ARCH");
    if (old) old_ = old;
    ::setenv("LEROBOT_PI_ARCH", file.c_str(), 1);
  }
  ~ArchEnv() {
    if (old_) ::setenv("LEROBOT_PI_ARCH", old_->c_str(), 1);
    else ::unsetenv("LEROBOT_PI_ARCH");
  }

 private:
  std::optional<std::string> old_;
};

const std::string kEmbed = "paligemma_with_expert.paligemma.model.language_model.embed_tokens.weight";
const std::string kLmHead = "paligemma_with_expert.paligemma.lm_head.weight";

struct Owned {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string bytes;
};
using Tensors = std::map<std::string, Owned>;

float element(const Owned& t, size_t i) {
  if (t.dtype == DType::kF32) {
    float f;
    std::memcpy(&f, t.bytes.data() + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, t.bytes.data() + 2 * i, 2);
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void set_element(Owned& t, size_t i, float f) {
  if (t.dtype == DType::kF32) {
    std::memcpy(&t.bytes[4 * i], &f, 4);
    return;
  }
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  const uint16_t h = static_cast<uint16_t>(u >> 16);
  std::memcpy(&t.bytes[2 * i], &h, 2);
}

size_t count(const Owned& t) { return t.bytes.size() / dtype_size(t.dtype); }

Tensors read_tensors(const fs::path& file) {
  SafetensorsReader r(file);
  Tensors out;
  for (const auto& [name, v] : r.tensors())
    out[name] = Owned{v.dtype, v.shape, std::string(reinterpret_cast<const char*>(v.data), v.nbytes)};
  return out;
}

void write_tensors(const fs::path& file, const Tensors& tensors) {
  std::vector<TensorEntry> entries;
  for (const auto& [name, t] : tensors) entries.push_back(TensorEntry{name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
  write_safetensors(file, entries);
}

// Our state dict under openpi's names (what the published bases' model.safetensors hold), every
// float weight moved by +0.0625 so nothing a fresh initialization makes can equal it.
Tensors openpi_form(const Tensors& ours, bool pi05) {
  Tensors out;
  for (const auto& [key, value] : ours) {
    EXPECT_TRUE(starts_with(key, "model.")) << key;
    std::string k = key.substr(6);
    if (!pi05 && starts_with(k, "action_time_mlp_")) k = k.substr(7);  // openpi's π0: time_mlp_in/out
    if (k == kEmbed) continue;                                      // tied to lm_head in the file
    Owned t = value;
    if (t.dtype == DType::kF32 || t.dtype == DType::kBF16)
      for (size_t i = 0; i < count(t); ++i) set_element(t, i, element(t, i) + 0.0625f);
    out[k] = std::move(t);
  }
  return out;
}

float max_abs_diff(const Owned& a, const Owned& b) {
  float m = 0;
  for (size_t i = 0; i < count(a); ++i) m = std::max(m, std::fabs(element(a, i) - element(b, i)));
  return m;
}

class HubPiFinetune : public ::testing::TestWithParam<std::string> {};

TEST_P(HubPiFinetune, FromThePublishedBaseLayoutThroughTheHub) {
  const std::string type = GetParam();
  const bool pi05 = type == "pi05";
  const std::string dtype = pi05 ? "bfloat16" : "float32";
  const std::string base_id = pi05 ? "lerobot/pi05_base" : "lerobot/pi0_base";
  TempDir tmp;
  ArchEnv arch(tmp.path / "arch.json");
  std::string log;
  const fs::path data = tmp.path / "reach2d";
  ASSERT_EQ(run_cli("dataset generate --env.type=reach2d --num_episodes=3 --env.image_size=64 --output_dir=" +
                        data.string(), &log), 0) << log;

  // google/paligemma-3b-pt-224: the tokenizer files π's processors ask for.
  const fs::path tok = tmp.path / "paligemma_tok";
  fs::create_directories(tok);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(fs::path(LEROBOT_SOURCE_DIR) / "tests/policies/data/gemma_tokenizer" / f, tok / f);
  const Json tok_repo = model_repo("google/paligemma-3b-pt-224", std::string(40, 'e'), tok);

  // The base: a one-step run's weights at the small sizes, rewritten in the published layout.
  const fs::path made = tmp.path / "made";
  const std::string common = " --dataset.root=" + data.string() + " --batch_size=4 --log_freq=1 --num_workers=0 --seed=7";
  {
    Json config{{"token", "unused"}, {"faults", Json::object()}, {"repos", Json::array({tok_repo})}};
    testing::HubServer server(config, tmp.path / "server0");
    HubEnvironment env(server.endpoint(), tmp.path / "hf_home0");
    ASSERT_EQ(run_cli("train --policy.type=" + type + " --policy.dtype=" + dtype +
                          " --policy.chunk_size=4 --policy.n_action_steps=4 --policy.max_state_dim=8"
                          " --policy.max_action_dim=8 --policy.image_resolution=[32,32]"
                          " --policy.tokenizer_max_length=24 --policy.num_inference_steps=2"
                          " --steps=1" + common + " --output_dir=" + made.string(), &log), 0) << log;
  }
  const fs::path base = tmp.path / "base";
  fs::create_directories(base);
  const fs::path made_pm = made / "checkpoints/000001/pretrained_model";
  fs::copy_file(made_pm / "config.json", base / "config.json");
  const Tensors served = openpi_form(read_tensors(made_pm / "model.safetensors"), pi05);
  write_tensors(base / "model.safetensors", served);
  ASSERT_FALSE(served.count(kEmbed));
  ASSERT_TRUE(served.count(kLmHead));
  ASSERT_TRUE(served.count("time_mlp_in.weight"));  // π0: LeRobot renames it to action_time_mlp_in
  if (pi05) {  // LeRobot's bfloat16 layout: the language model in bfloat16, the vision tower float32
    EXPECT_EQ(served.at(kLmHead).dtype, DType::kBF16);
    EXPECT_EQ(served.at("paligemma_with_expert.paligemma.model.vision_tower.vision_model.embeddings.patch_embedding.weight")
                  .dtype, DType::kF32);
  }

  // Fine-tuning from the Hub id, the vision encoder frozen.
  Json config{{"token", "unused"}, {"faults", Json::object()},
              {"repos", Json::array({tok_repo, model_repo(base_id, std::string(40, pi05 ? '5' : '0'), base)})}};
  testing::HubServer server(config, tmp.path / "server");
  HubEnvironment env(server.endpoint(), tmp.path / "hf_home");
  const fs::path run = tmp.path / "ft";
  ASSERT_EQ(run_cli("train --policy.path=" + base_id + " --policy.freeze_vision_encoder=true --steps=2" + common +
                        " --output_dir=" + run.string(), &log), 0) << log;
  EXPECT_NE(log.find("Remapped " + std::to_string(served.size()) + " state dict keys"), std::string::npos) << log;
  EXPECT_NE(log.find("Vision embedding key might need handling"), std::string::npos) << log;
  EXPECT_NE(log.find("Fine-tuning from"), std::string::npos) << log;

  const fs::path pm = run / "checkpoints/000002/pretrained_model";
  const Json cfg = Json::parse(read_file(pm / "config.json"));
  EXPECT_EQ(cfg["type"], type);
  EXPECT_EQ(cfg["dtype"], dtype);
  const Tensors got = read_tensors(pm / "model.safetensors");
  int exact = 0, close = 0;
  for (const auto& [key, value] : got) {
    std::string k = key.substr(6);
    if (!pi05 && starts_with(k, "action_time_mlp_")) k = k.substr(7);
    const std::string from = k == kEmbed ? kLmHead : k;  // LeRobot: embed_tokens is lm_head's copy
    auto it = served.find(from);
    ASSERT_NE(it, served.end()) << key << " is not in the base";
    EXPECT_EQ(value.dtype, it->second.dtype) << key << ": not the base's dtype";
    ASSERT_EQ(value.shape, it->second.shape) << key;
    if (k.find("vision_tower") != std::string::npos || k == kLmHead) {  // frozen / no gradient: the served bytes
      EXPECT_TRUE(value.bytes == it->second.bytes) << key << " is not the served value";
      ++exact;
    } else {  // two steps at π's small lr from the served value (bfloat16: an ulp or two)
      if (value.dtype != DType::kF32 && value.dtype != DType::kBF16) continue;
      EXPECT_LE(max_abs_diff(value, it->second), 0.02f) << key << " is not near the served value";
      ++close;
    }
  }
  EXPECT_EQ(got.size(), served.size() + 1);  // + embed_tokens
  EXPECT_GT(exact, 10);
  EXPECT_GT(close, 10);
  // Everything came through the Hub client: the base's two files, nothing else asked for.
  int config_gets = 0, weight_gets = 0;
  for (const auto& r : server.requests()) {
    const std::string p = r.value("path", "");
    if (p.find(base_id) == std::string::npos) continue;
    if (ends_with(p, "/config.json")) ++config_gets;
    if (ends_with(p, "/model.safetensors")) ++weight_gets;
  }
  EXPECT_GT(config_gets, 0);
  EXPECT_GT(weight_gets, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, HubPiFinetune, ::testing::Values("pi05", "pi0"));

}  // namespace
}  // namespace lerobot::hub
