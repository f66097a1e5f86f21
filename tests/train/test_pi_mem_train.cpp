// π0.5 with MEM observation memory through the command line (LEROBOT_PI_ARCH's small sizes, a
// 2-layer SigLIP) on the generated reach2d dataset: the dataset delivers each camera's and the
// state's history at the config's delta indices with their `_is_pad`, training moves
// proprio_history_proj (saved under LeRobot's key) with the state out of the prompt, and the
// deployment API remembers past observations until reset(). Values against LeRobot's own code:
// tests/policies/test_pi_mem_reference.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/policies/inference.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "pi_train_helpers.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using testing::run_train;
using testing::tiny_pi_run;
using testing::train_scratch;

const std::vector<std::string> kMemFlags = {"--policy.use_visual_memory=true", "--policy.use_proprioceptive_memory=true",
                                            "--policy.memory_frames=3", "--policy.memory_stride=2",
                                            "--policy.memory_temporal_attention_every=2"};

// LeRobot's resolve_delta_timestamps with PI05Config's image/state indices: the camera and the
// state get -4, -2, 0; an item two frames into an episode has its older frames padded (copies of
// the episode's first frame, `_is_pad` true), one later in the episode none.
TEST(PiMemDataset, TheHistoryArrivesAtTheConfigsDeltaIndicesWithItsPadding) {
  PI05Config c;
  c.use_visual_memory = c.use_proprioceptive_memory = true;
  c.memory_frames = 3, c.memory_stride = 2;
  const auto meta = load_dataset_metadata(testing::reach2d_dataset());
  const DeltaIndices deltas = resolve_delta_indices(
      meta, DeltaIndexRequest{c.observation_delta_indices(), c.image_observation_delta_indices(),
                              c.state_observation_delta_indices(), c.action_delta_indices(), std::nullopt});
  EXPECT_EQ(deltas.at("observation.image"), (std::vector<int64_t>{-4, -2, 0}));
  EXPECT_EQ(deltas.at("observation.state"), (std::vector<int64_t>{-4, -2, 0}));
  EXPECT_EQ(deltas.at("action").size(), 50u);
  LeRobotDatasetOptions o;
  o.delta_indices = deltas;
  LeRobotDataset ds(testing::reach2d_dataset(), o);
  const int64_t first = ds.episode_ranges().front().first;
  const auto early = ds.get_item(first + 2).tensors;
  EXPECT_EQ(early.at("observation.state").sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(early.at("observation.image").size(0), 3);
  EXPECT_TRUE(torch::equal(early.at("observation.state_is_pad"), torch::tensor({true, false, false})));
  EXPECT_TRUE(torch::equal(early.at("observation.image_is_pad"), torch::tensor({true, false, false})));
  EXPECT_TRUE(torch::equal(early.at("observation.state")[0], ds.get_item(first).tensors.at("observation.state")[2]));
  const auto later = ds.get_item(first + 6).tensors;
  EXPECT_FALSE(later.at("observation.state_is_pad").any().item<bool>());
  EXPECT_TRUE(torch::equal(later.at("observation.state")[0], early.at("observation.state")[2]));  // frame first+2
  // Asking for a camera history with no camera in the dataset is refused (LeRobot raises).
  DatasetMetadata no_camera = meta;
  no_camera.features.erase(std::remove_if(no_camera.features.begin(), no_camera.features.end(),
                                          [](const auto& f) { return f.key == "observation.image"; }),
                           no_camera.features.end());
  EXPECT_THROW(resolve_delta_indices(no_camera, DeltaIndexRequest{std::nullopt, c.image_observation_delta_indices(),
                                                                  std::nullopt, std::nullopt, std::nullopt}),
               Error);
}

TEST(PiMemTrain, TrainsSavesAndRemembersAtInference) {
  testing::PiEnv env;
  const fs::path out = train_scratch() / "pi05_mem";
  auto extra = kMemFlags;
  extra.push_back("--save_freq=1");
  run_train(tiny_pi_run("pi05", out, 2, extra));
  const auto w1 = testing::checkpoint_weights(out, 1), w2 = testing::checkpoint_weights(out, 2);
  const std::string proj = "model.proprio_history_proj.weight";
  ASSERT_TRUE(w2.count(proj)) << "LeRobot's key";
  EXPECT_EQ(w2.at(proj).size(1), 8);  // max_state_dim inputs
  EXPECT_FALSE(torch::equal(w1.at(proj), w2.at(proj))) << "the projection trains";
  const fs::path pm = out / "checkpoints/last/pretrained_model";
  const Json cfg = Json::parse(read_file(pm / "config.json"));
  EXPECT_EQ(cfg["use_visual_memory"], true);
  EXPECT_EQ(cfg["memory_stride"], 2);
  // The prompt step is saved with an empty config, as LeRobot's (its Pi05PrepareStateTokenizerProcessorStep
  // has no get_config): include_state_in_prompt=false does not survive the file in LeRobot either.
  const Json pre = Json::parse(read_file(pm / "policy_preprocessor.json"));
  for (const auto& s : pre["steps"])
    if (s["registry_name"] == "pi05_prepare_state_tokenizer_processor_step") EXPECT_EQ(s["config"], Json::object());

  // Deployment: A, A, B then B alone after reset(). With ages 4, 2, 0 the third step sees A as a
  // real past frame; after reset B's past is padding, so the chunk differs.
  InferencePolicy policy(pm);
  policy.set_task("push the block");
  const std::map<std::string, torch::Tensor> a = {{"observation.state", torch::tensor({0.3f, 0.6f})},
                                                  {"observation.image", torch::full({3, 64, 64}, 40, torch::kUInt8)}};
  const std::map<std::string, torch::Tensor> b = {{"observation.state", torch::tensor({-0.5f, 0.1f})},
                                                  {"observation.image", torch::full({3, 64, 64}, 200, torch::kUInt8)}};
  auto chunk_after = [&](const std::vector<const std::map<std::string, torch::Tensor>*>& seen) {
    policy.reset();
    torch::Tensor chunk;
    for (const auto* obs : seen) {
      torch::manual_seed(3);
      chunk = policy.predict_action_chunk(*obs);
    }
    return chunk;
  };
  const auto remembered = chunk_after({&a, &a, &b}), fresh = chunk_after({&b}), again = chunk_after({&b});
  ASSERT_EQ(remembered.sizes().vec(), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(torch::isfinite(remembered).all().item<bool>());
  EXPECT_TRUE(torch::equal(fresh, again)) << "reset() forgets";
  const double moved = (remembered - fresh).abs().max().item<double>();
  std::cout << "chunk with A remembered vs after reset: max difference " << moved << "\n";
  EXPECT_GT(moved, 1e-6) << "the remembered frame reached the model";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(policy.select_action(a).sizes().vec(), (std::vector<int64_t>{2}));

  // eval: two environments in one batch, the memory reset before the rollout (LeRobot's rule).
  testing::expect_eval_on_reach2d(pm, out / "eval");
}

// Sharded over two processes (each SigLIP layer a unit, the space-time one included, its weights
// gathered around it) with gradient checkpointing: the update DDP makes.
TEST(PiMemTrain, ShardedWithCheckpointingMatchesDdp) {
  testing::PiEnv env;
  std::string mem;
  for (const auto& f : kMemFlags) mem += " " + f;
  const std::string sgd =
      " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.lr=1e-2 --optimizer.weight_decay=0"
      " --optimizer.grad_clip_norm=1 --policy.gradient_checkpointing=true";
  std::map<std::string, std::string> logs;
  auto cli_run = [&](const std::string& name, int64_t steps, const std::string& extra) {
    std::string args = "train";
    for (const auto& a : tiny_pi_run("pi05", train_scratch() / ("mem_" + name), steps)) args += " " + a;
    std::string& log = logs[name];
    EXPECT_EQ(testing::run_shell("OMP_NUM_THREADS=1 " + std::string(LEROBOT_CLI) + " " + args + mem + sgd + extra, &log), 0)
        << name << ":\n" << log;
    return load_safetensors(train_scratch() / ("mem_" + name) / "checkpoints/last/pretrained_model/model.safetensors");
  };
  const auto init = cli_run("init", 1, " --optimizer.lr=0");
  const auto ddp = cli_run("ddp", 2, " --num_processes=2");
  const auto sharded = cli_run("fsdp", 2, " --num_processes=2 --parallelism.dp_shard=2");
  double num = 0, den = 0;
  for (const auto& [k, v0] : init) {
    const auto a = v0.to(torch::kDouble);
    const auto dd = ddp.at(k).to(torch::kDouble) - a, ds = sharded.at(k).to(torch::kDouble) - a;
    num += (dd - ds).pow(2).sum().item<double>();
    den += dd.pow(2).sum().item<double>();
  }
  ASSERT_GT(den, 0.0);
  const auto at = logs["fsdp"].find("Sharded data parallel over 2 processes");
  ASSERT_NE(at, std::string::npos) << logs["fsdp"];
  std::printf("%s\n", logs["fsdp"].substr(at, logs["fsdp"].find('\n', at) - at).c_str());
  std::printf("MEM: relative update difference sharded vs DDP %.3g\n", std::sqrt(num / den));
  EXPECT_LE(std::sqrt(num / den), 1e-5);
  const std::string proj = "model.proprio_history_proj.weight";
  EXPECT_FALSE(torch::equal(ddp.at(proj), init.at(proj)));
}

}  // namespace
}  // namespace lerobot
