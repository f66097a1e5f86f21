// Sharded data parallel (--parallelism.dp_shard=2) over 2 real processes (built-in launcher, Gloo
// on 127.0.0.1) gives the parameter updates of the DDP run and of one process on the same global
// batch, with gradient clipping by the global norm (active: the norm is far above the limit) and
// with gradient accumulation; one process on half the data is far from them (the comparison can
// fail). Its checkpoint has the non-sharded layout: the optimizer state an unsharded run writes
// (same keys, shapes), resumed exactly by a sharded run, by one process without sharding, and a
// DDP checkpoint resumed sharded. Hybrid sharding (4 processes, 2 shard groups of 2) gives DDP's
// update too.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "lerobot/common/config/json.h"
#include "train_dist_util.h"

using namespace lerobot_test;

namespace {
constexpr double kTolerance = 1e-5;

// Plain SGD at lr 1e-4 (see equivalence_flags) with clipping at 0.05, well under ACT's gradient
// norm here, so every update is clipped.
std::string sharded_flags(const std::string& dataset) { return equivalence_flags(dataset) + " --optimizer.grad_clip_norm=0.05"; }

std::string train(const std::string& dir, const std::string& name, const std::string& flags, int expect_code = 0) {
  const std::string out = dir + "/" + name;
  auto r = run_command("timeout -k 5 180 " + cli() + " train" + flags + " --output_dir=" + out);
  EXPECT_EQ(r.code, expect_code) << name << ":\n" << r.out;
  return out;
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }
}  // namespace

TEST(TrainSharded, TwoShardsMatchDdpAndOneProcessWithClippingAndAccumulation) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string f = sharded_flags(ds);
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());
  const Params one = load_params(final_model(train(dir.path, "one", f + " --batch_size=8 --steps=3")));
  const Params ddp = load_params(final_model(train(dir.path, "ddp", f + " --batch_size=4 --steps=3 --num_processes=2")));
  const std::string sharded_dir = train(dir.path, "sharded", f + " --batch_size=4 --steps=3 --num_processes=2 --parallelism.dp_shard=2");
  const Params sharded = load_params(final_model(sharded_dir));
  const Params accum = load_params(final_model(train(
      dir.path, "accum",
      f + " --batch_size=2 --steps=6 --num_processes=2 --parallelism.dp_shard=-1 --accelerator.gradient_accumulation.steps=2")));
  const Params half = load_params(final_model(train(dir.path, "half", f + " --batch_size=4 --steps=3")));
  // Sharding around LeRobot's generic activation checkpointing (each unit gathered again for its
  // recomputation): the same update.
  const Params recomputed = load_params(final_model(train(
      dir.path, "recomputed",
      f + " --batch_size=4 --steps=3 --num_processes=2 --parallelism.dp_shard=2 --accelerator.activation_checkpointing.mode=full")));
  ASSERT_FALSE(one.empty() || ddp.empty() || sharded.empty() || accum.empty() || half.empty() || recomputed.empty());

  const double vs_ddp = relative_update_diff(init, ddp, sharded);
  const double vs_one = relative_update_diff(init, one, sharded);
  const double accum_vs_one = relative_update_diff(init, one, accum);
  const double ddp_vs_one = relative_update_diff(init, one, ddp);
  const double half_vs_one = relative_update_diff(init, one, half);
  std::printf("relative update difference: sharded vs DDP %.3g, sharded vs one process %.3g, sharded with accumulation "
              "vs one process %.3g (DDP vs one process %.3g); one process on half the data %.3g\n",
              vs_ddp, vs_one, accum_vs_one, ddp_vs_one, half_vs_one);
  // Sharding changes nothing DDP computes: the same per-rank batches, the same update.
  EXPECT_LE(vs_ddp, kTolerance);
  // Against one process both schemes differ by what the batch layout does to float rounding (DDP
  // itself: 1.4e-5 after 3 steps on LibTorch 1.13, 2.5e-7 after one): sharding may not add to it.
  // Over more steps the model's dynamics amplify any rounding difference (sharded vs DDP: 2.2e-7
  // after 3 steps, 1.7e-5 after 10; DDP vs one process 1.3e-5 after 10).
  EXPECT_LE(vs_one, std::max(kTolerance, 2 * ddp_vs_one));
  EXPECT_LE(accum_vs_one, std::max(kTolerance, 2 * ddp_vs_one));
  EXPECT_LE(ddp_vs_one, 1e-4);
  EXPECT_GT(half_vs_one, 1000 * kTolerance) << "half the data should give another update";
  const double recomputed_vs_sharded = relative_update_diff(init, sharded, recomputed);
  std::printf("sharded with activation checkpointing vs sharded: %.3g\n", recomputed_vs_sharded);
  EXPECT_LE(recomputed_vs_sharded, 1e-6);

  const std::string info = read_text(sharded_dir + "/checkpoints/last/training_state/training_step.json");
  EXPECT_NE(info.find("\"dp_shard\": 2"), std::string::npos) << info;
}

// --accelerator.fsdp.cpu_offload=true: the optimizer steps host copies of the shards (here the
// host and the device are both the CPU, but the copies are distinct storages and the copies
// between them run). With SGD and clipping it gives DDP's update; with AdamW (state to keep on
// the host and to checkpoint) the plain sharded run's parameters and optimizer state exactly,
// as nothing in the arithmetic changes. The start-up report says where the optimizer state is.
TEST(TrainSharded, CpuOffloadMatchesDdpAndThePlainShardedRun) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string f = sharded_flags(ds) + " --batch_size=4 --steps=3 --num_processes=2";
  const std::string offload = " --parallelism.dp_shard=2 --accelerator.fsdp.cpu_offload=true";
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());
  const Params ddp = load_params(final_model(train(dir.path, "ddp", f)));
  auto r = run_command("timeout -k 5 180 " + cli() + " train" + f + offload + " --output_dir=" + dir.path + "/offload");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("optimizer state on the host (cpu_offload"), std::string::npos) << r.out;
  const Params off = load_params(final_model(dir.path + "/offload"));
  ASSERT_FALSE(ddp.empty() || off.empty());
  const double vs_ddp = relative_update_diff(init, ddp, off);
  std::printf("relative update difference: sharded with cpu_offload vs DDP %.3g\n", vs_ddp);
  EXPECT_LE(vs_ddp, kTolerance);

  // AdamW, a checkpoint at step 2: offloaded and not, the same parameters and optimizer state.
  const std::string a = act_flags(ds) + " --batch_size=4 --steps=2 --save_freq=2 --num_processes=2 --parallelism.dp_shard=2";
  r = run_command("timeout -k 5 180 " + cli() + " train" + a + " --output_dir=" + dir.path + "/plain");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("optimizer state on the device"), std::string::npos) << r.out;
  const std::string adam_off = train(dir.path, "adam_offload", a + " --accelerator.fsdp.cpu_offload=true");
  const std::string state = "/checkpoints/last/training_state/optimizer_state.safetensors";
  for (const std::string& file : {std::string("/checkpoints/last/pretrained_model/model.safetensors"), state}) {
    const Params plain = load_params(dir.path + "/plain" + file), offloaded = load_params(adam_off + file);
    ASSERT_FALSE(plain.empty()) << file;
    ASSERT_EQ(plain.size(), offloaded.size()) << file;
    for (const auto& [k, t] : plain) {
      ASSERT_EQ(offloaded.count(k), 1u) << file << " " << k;
      EXPECT_TRUE(torch::equal(t, offloaded.at(k))) << file << " " << k;
    }
  }
  EXPECT_EQ(load_params(adam_off + state).count("state/0/exp_avg_sq"), 1u);
}

TEST(TrainSharded, CheckpointHasTheUnshardedLayoutAndResumesOnAnyLayout) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  // AdamW, so that the optimizer has state to shard and to write.
  const std::string f = act_flags(ds) + " --batch_size=4 --num_processes=2 --save_freq=3 --steps=6";
  const std::string sharded = train(dir.path, "sharded", f + " --parallelism.dp_shard=2");
  const std::string ddp = train(dir.path, "ddp", f);
  const std::string ckpt3 = "/checkpoints/000003";

  // The optimizer state of step 3: the keys and shapes of the DDP run's, values near them.
  const Params s3 = load_params(sharded + ckpt3 + "/training_state/optimizer_state.safetensors");
  const Params d3 = load_params(ddp + ckpt3 + "/training_state/optimizer_state.safetensors");
  ASSERT_FALSE(s3.empty());
  ASSERT_EQ(s3.size(), d3.size());
  for (const auto& [k, t] : d3) {
    ASSERT_EQ(s3.count(k), 1u) << k;
    EXPECT_EQ(s3.at(k).sizes(), t.sizes()) << k;
    if (k.size() > 8 && k.substr(k.size() - 8) == "/exp_avg") {
      EXPECT_LE(max_abs(s3.at(k) - t), 1e-4 + 1e-3 * max_abs(t)) << k;
    }
  }
  EXPECT_EQ(read_text(sharded + ckpt3 + "/training_state/optimizer_param_groups.json"),
            read_text(ddp + ckpt3 + "/training_state/optimizer_param_groups.json"));

  // A copy of the sharded run stopped at step 3, resumed sharded: the uninterrupted run's parameters.
  const std::string part = dir.path + "/part";
  std::filesystem::copy(sharded, part, std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::filesystem::remove_all(part + "/checkpoints/000006");
  std::filesystem::remove(part + "/checkpoints/last");
  std::filesystem::create_directory_symlink("000003", part + "/checkpoints/last");
  {
    const std::string cfg = part + ckpt3 + "/pretrained_model/train_config.json";
    std::string text = read_text(cfg);
    const size_t at = text.find(sharded);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, sharded.size(), part);
    std::ofstream(cfg) << text;
  }
  const std::string resume = " --resume=true --config_path=";
  auto r = run_command("timeout -k 5 180 " + cli() + " train --num_processes=2" + resume + part + ckpt3 + "/pretrained_model");
  ASSERT_EQ(r.code, 0) << r.out;
  const Params uninterrupted = load_params(final_model(sharded));
  const Params resumed = load_params(final_model(part));
  ASSERT_FALSE(resumed.empty());
  for (const auto& [k, t] : uninterrupted) EXPECT_TRUE(torch::equal(t, resumed.at(k))) << k;

  // The sharded checkpoint resumed by one process without sharding, and the DDP one resumed sharded.
  r = run_command("timeout -k 5 180 " + cli() + " train" + resume + sharded +
                  "/checkpoints/last/pretrained_model --parallelism.dp_shard=1 --num_processes=1 --steps=8");
  EXPECT_EQ(r.code, 0) << r.out;
  r = run_command("timeout -k 5 180 " + cli() + " train" + resume + ddp +
                  "/checkpoints/last/pretrained_model --parallelism.dp_shard=2 --num_processes=2 --steps=8");
  EXPECT_EQ(r.code, 0) << r.out;
}

// Hybrid sharding (HSDP, --parallelism.dp_replicate=2 --parallelism.dp_shard=2) over 4 processes:
// two shard groups of two, replicating each other, give the DDP run's update on the same 4 ranks
// (SGD with clipping by the global norm: a gradient averaged over a shard group only would show),
// within the rounding by which DDP itself differs from one process on the whole batch.
// The checkpoint records the layout as LeRobot's training_step.json does.
TEST(TrainSharded, HybridShardingMatchesDdpOnFourProcesses) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string f = sharded_flags(ds) + " --batch_size=2 --steps=3 --num_processes=4";
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());
  const Params ddp = load_params(final_model(train(dir.path, "ddp", f)));
  auto r = run_command("timeout -k 5 180 " + cli() + " train" + f + " --parallelism.dp_replicate=2 --parallelism.dp_shard=2" +
                       " --output_dir=" + dir.path + "/hybrid");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Sharded data parallel over 2 processes (hybrid: 2 replicas"), std::string::npos) << r.out;
  const Params hybrid = load_params(final_model(dir.path + "/hybrid"));
  ASSERT_FALSE(ddp.empty() || hybrid.empty());
  const Params one = load_params(final_model(train(dir.path, "one", sharded_flags(ds) + " --batch_size=8 --steps=3")));
  ASSERT_FALSE(one.empty());
  const double vs_ddp = relative_update_diff(init, ddp, hybrid);
  const double ddp_vs_one = relative_update_diff(init, one, ddp);
  std::printf("relative update difference: hybrid sharding (2 x 2) vs DDP on 4 processes %.3g (DDP vs one process %.3g)\n",
              vs_ddp, ddp_vs_one);
  // HSDP averages in two stages (over the shard group, then the replicas), DDP in one: the float
  // rounding differs as the batch layout makes DDP's differ from one process's (see above).
  EXPECT_LE(vs_ddp, std::max(kTolerance, 2 * ddp_vs_one));
  EXPECT_LE(ddp_vs_one, 1e-4);
  const std::string info = read_text(dir.path + "/hybrid/checkpoints/last/training_state/training_step.json");
  EXPECT_NE(info.find("\"dp_replicate\": 2"), std::string::npos) << info;
  EXPECT_NE(info.find("\"dp_shard\": 2"), std::string::npos) << info;
}

// The held-out loss (--eval_steps) of a sharded run gathers one unit at a time, as the step does,
// never the whole model (the line reports the most held at once), and equals one process's on the
// same batches (lr 0: both evaluate the initial weights). An odd batch count over 2 ranks: rank 1
// runs an uncounted extra forward so the units' all-gathers pair up.
TEST(TrainSharded, HeldOutLossGathersUnitByUnitAndEqualsOneProcess) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  // 3 encoder and 3 decoder layers: 6 units, of which the step holds 2 at once (ResNet-18, the
  // root, is most of the model).
  std::string f = act_flags(ds);
  for (const char* layers : {"--policy.n_encoder_layers=1", "--policy.n_decoder_layers=1"})
    f.replace(f.find(layers), std::strlen(layers), std::string(layers, std::strlen(layers) - 1) + "3");
  f +=                  " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.lr=0"
                        " --optimizer.weight_decay=0 --steps=1 --dataset.eval_split=0.2 --eval_steps=1";
  const auto eval_record = [](const std::string& out) {
    lerobot::Json rec;
    std::ifstream in(out + "/train_metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const lerobot::Json j = lerobot::Json::parse(line);
      if (j.contains("eval_loss")) rec = j;
    }
    return rec;
  };
  lerobot::Json one = eval_record(train(dir.path, "one4", f + " --batch_size=4"));
  ASSERT_TRUE(one.contains("eval_samples"));
  const int64_t frames = one["eval_samples"].get<int64_t>();
  int64_t batch = 4;
  while (((frames + batch - 1) / batch) % 2 == 0) ++batch;
  if (batch != 4) one = eval_record(train(dir.path, "one", f + " --batch_size=" + std::to_string(batch)));
  auto r = run_command("timeout -k 5 180 " + cli() + " train" + f + " --batch_size=" + std::to_string(batch) +
                       " --num_processes=2 --parallelism.dp_shard=2 --output_dir=" + dir.path + "/sharded");
  ASSERT_EQ(r.code, 0) << r.out;
  const lerobot::Json sharded = eval_record(dir.path + "/sharded");
  ASSERT_TRUE(one.contains("eval_loss") && sharded.contains("eval_loss")) << r.out;
  EXPECT_EQ(sharded["eval_samples"], one["eval_samples"]);
  EXPECT_EQ(sharded["eval_batches"], one["eval_batches"]);
  EXPECT_EQ(sharded["eval_batches"].get<int64_t>() % 2, 1) << "an odd count exercises the uncounted forward";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("at most ([0-9]+) of the model's ([0-9]+) bytes gathered"))) << r.out;
  const double held = std::stod(m[1].str()), total = std::stod(m[2].str());
  const double a = sharded["eval_loss"].get<double>(), b = one["eval_loss"].get<double>();
  std::printf("held-out loss over %lld batches: sharded %.9g, one process %.9g; at most %.0f of %.0f bytes gathered at once\n",
              static_cast<long long>(sharded["eval_batches"].get<int64_t>()), a, b, held, total);
  EXPECT_NEAR(a, b, 1e-6 * std::max(1.0, std::abs(b)));
  EXPECT_GT(held, 0);
  EXPECT_LT(held, total);  // the whole model gathered (as before this scope) reads held == total
}

// LoRA adapters (--peft.*) in a sharded run: the frozen base is sharded with the adapters (each
// unit's flats split by trainability), only the adapters and the modules to save train, and their
// update equals the DDP run's. The checkpoint is PEFT's folder (adapter_model.safetensors from the
// weights gathered unit by unit, no model.safetensors).
TEST(TrainSharded, LoraAdaptersMatchDdp) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  std::string base_flags = act_flags(ds);
  base_flags.replace(base_flags.find("--policy.n_encoder_layers=1"), std::strlen("--policy.n_encoder_layers=1"),
                     "--policy.n_encoder_layers=2");
  train(dir.path, "base", base_flags + " --batch_size=4 --steps=1");
  const std::string f = " --policy.path=" + dir.path + "/base/checkpoints/last/pretrained_model --dataset.root=" + ds +
                        " --seed=7 --num_workers=0 --log_freq=10 --policy.device=cpu --batch_size=4 --num_processes=2"
                        " --peft.target_modules=[linear1,linear2] --peft.full_training_modules=[action_head] --peft.r=4"
                        " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.weight_decay=0"
                        " --optimizer.grad_clip_norm=1";
  const auto adapters = [&](const std::string& name) {
    return load_params(dir.path + "/" + name + "/checkpoints/last/pretrained_model/adapter_model.safetensors");
  };
  train(dir.path, "init", f + " --optimizer.lr=0 --steps=1");
  train(dir.path, "ddp", f + " --optimizer.lr=1e-2 --steps=3");
  train(dir.path, "fewer", f + " --optimizer.lr=1e-2 --steps=2");
  const std::string sharded_dir = train(dir.path, "sharded", f + " --optimizer.lr=1e-2 --steps=3 --parallelism.dp_shard=2");
  const Params init = adapters("init"), ddp = adapters("ddp"), fewer = adapters("fewer"), sharded = adapters("sharded");
  ASSERT_FALSE(init.empty() || ddp.empty() || fewer.empty() || sharded.empty());
  EXPECT_FALSE(std::filesystem::exists(sharded_dir + "/checkpoints/last/pretrained_model/model.safetensors"));
  int lora = 0, saved = 0;
  for (const auto& [k, t] : sharded) {
    lora += k.find(".lora_") != std::string::npos;
    saved += k.find("action_head") != std::string::npos;
  }
  EXPECT_EQ(lora, 2 * 6) << "lora_A and lora_B of linear1/linear2 in 2 encoder layers and 1 decoder layer";
  EXPECT_GT(saved, 0) << "the module to save";
  const double vs_ddp = relative_update_diff(init, ddp, sharded);
  const double fewer_vs_ddp = relative_update_diff(init, ddp, fewer);
  std::printf("LoRA: relative update difference of the adapters, sharded vs DDP %.3g; DDP one step shorter %.3g\n", vs_ddp,
              fewer_vs_ddp);
  EXPECT_LE(vs_ddp, kTolerance);
  EXPECT_GT(fewer_vs_ddp, 100 * kTolerance);
}

// fp16 loss scaling in a sharded run: each process unscales its own shards, the overflow is decided
// over both (LossScaler's reduction), so both skip the same steps with the same scale; the update
// is DDP's and the skipped count too. A scale of 1e38 overflows at first and backs off.
TEST(TrainSharded, Fp16LossScalingMatchesDdp) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string f = sharded_flags(ds) + " --batch_size=4 --steps=8 --num_processes=2 --log_freq=8"
                        " --accelerator.mixed_precision=fp16 --accelerator.loss_scale_init=1e38";
  const Params init = initial_params(dir.path, ds);
  ASSERT_FALSE(init.empty());
  const std::string ddp_dir = train(dir.path, "ddp", f);
  const std::string sharded_dir = train(dir.path, "sharded", f + " --parallelism.dp_shard=2");
  const Params ddp = load_params(final_model(ddp_dir)), sharded = load_params(final_model(sharded_dir));
  ASSERT_FALSE(ddp.empty() || sharded.empty());
  const auto skipped = [](const std::string& out) {
    int64_t n = -1;
    std::ifstream in(out + "/train_metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const lerobot::Json j = lerobot::Json::parse(line);
      if (j.contains("skipped_steps")) n = j["skipped_steps"].get<int64_t>();
    }
    return n;
  };
  const double vs_ddp = relative_update_diff(init, ddp, sharded);
  std::printf("fp16: relative update difference sharded vs DDP %.3g; skipped steps %lld and %lld\n", vs_ddp,
              static_cast<long long>(skipped(sharded_dir)), static_cast<long long>(skipped(ddp_dir)));
  EXPECT_GT(skipped(ddp_dir), 0) << "the initial scale overflows";
  EXPECT_LT(skipped(ddp_dir), 8) << "and backs off until steps are taken";
  EXPECT_EQ(skipped(sharded_dir), skipped(ddp_dir));
  EXPECT_LE(vs_ddp, kTolerance);
}

TEST(TrainSharded, BadSettingsNameTheFlag) {
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  const std::string f = act_flags(ds) + " --batch_size=4 --steps=1";
  struct Case {
    std::string flags, expect;
  };
  for (const Case& c : std::vector<Case>{
           {" --num_processes=2 --parallelism.dp_shard=3", "--parallelism.dp_shard"},
           {" --num_processes=2 --parallelism.dp_shard=2 --parallelism.dp_replicate=2", "dp_replicate=2 x dp_shard=2 != 2"},
           {" --num_processes=2 --parallelism.dp_replicate=3", "--parallelism.dp_replicate"},
           {" --num_processes=2 --parallelism.dp_shard=-1 --parallelism.dp_replicate=3", "cannot infer dp_shard"},
           {" --num_processes=2 --parallelism.dp_shard=2 --accelerator.fsdp.wrap_modules=[NoSuchLayer]", "ACTEncoderLayer"},
           {" --parallelism.dp_shard=0", "dp_shard"},
           {" --num_processes=2 --parallelism.dp_shard=2 --ema.enable=true", "--ema.enable"},
       }) {
    auto r = run_command("timeout -k 5 120 " + cli() + " train" + f + c.flags + " --output_dir=" + dir.path + "/bad");
    EXPECT_NE(r.code, 0) << c.flags;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.flags << ":\n" << r.out;
    std::filesystem::remove_all(dir.path + "/bad");
  }
}

// Diffusion (U-Net residual blocks as units), VQ-BeT (its GPT's blocks) and SmolVLA (joint layers
// and vision layers) sharded over 2 processes give the DDP run's update: both draw the same noise
// and time on each rank.
// SmolVLA with load_vlm_weights=true (its backbone and expert in bfloat16, which Gloo carries as
// float32) trains sharded too; its update is near DDP's but not equal to 1e-5: bfloat16 parameters
// round each update to 8 bits, and torch's clipping takes bfloat16 per-tensor norms while the
// shards' norm is summed in float32.
class TrainShardedPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainShardedPolicy, MatchesDdp) {
  one_thread_per_process();
  TempDir dir;
  const std::string ds = make_dataset(dir.path);
  std::string f = GetParam() == "diffusion"
                      ? " --policy.type=diffusion --policy.down_dims=[16,32] --policy.horizon=8 --policy.n_action_steps=4"
                        " --policy.pretrained_backbone_weights=null"
                  : GetParam() == "vqbet"
                      // One VQ-VAE step (no transformer block runs: the units are not gathered),
                      // then the GPT's two blocks as units.
                      ? " --policy.type=vqbet --policy.n_obs_steps=2 --policy.n_action_pred_token=2"
                        " --policy.action_chunk_size=3 --policy.crop_shape=[56,56] --policy.n_vqvae_training_steps=1"
                        " --policy.vqvae_n_embed=8 --policy.vqvae_embedding_dim=16 --policy.vqvae_enc_hidden_dim=32"
                        " --policy.gpt_n_layer=2 --policy.gpt_hidden_dim=32 --policy.gpt_input_dim=32"
                        " --policy.gpt_output_dim=32 --policy.gpt_n_head=2 --policy.pretrained_backbone_weights=null"
                      : " --policy.type=smolvla --policy.vlm_model_name=" LEROBOT_SOURCE_DIR
                        "/tests/policies/data/smolvla_tiny_vlm --policy.num_vlm_layers=4 --policy.chunk_size=4"
                        " --policy.n_action_steps=4 --policy.max_state_dim=8 --policy.max_action_dim=8"
                        " --policy.resize_imgs_with_padding=[32,32]";
  f += " --dataset.root=" + ds + " --seed=7 --num_workers=0 --log_freq=1 --policy.device=cpu --batch_size=4 --num_processes=2"
       " --use_policy_training_preset=false --optimizer.type=sgd --optimizer.weight_decay=0 --optimizer.grad_clip_norm=1";
  const Params init = load_params(final_model(train(dir.path, "init", f + " --optimizer.lr=0 --steps=1")));
  const Params ddp = load_params(final_model(train(dir.path, "ddp", f + " --optimizer.lr=1e-3 --steps=3")));
  const Params sharded =
      load_params(final_model(train(dir.path, "sharded", f + " --optimizer.lr=1e-3 --steps=3 --parallelism.dp_shard=2")));
  const Params fewer = load_params(final_model(train(dir.path, "fewer", f + " --optimizer.lr=1e-3 --steps=2")));
  ASSERT_FALSE(init.empty() || ddp.empty() || sharded.empty() || fewer.empty());
  const double vs_ddp = relative_update_diff(init, ddp, sharded);
  const double fewer_vs_ddp = relative_update_diff(init, ddp, fewer);
  std::printf("%s: relative update difference sharded vs DDP %.3g; DDP with one step less %.3g\n", GetParam().c_str(), vs_ddp,
              fewer_vs_ddp);
  EXPECT_LE(vs_ddp, kTolerance);
  EXPECT_GT(fewer_vs_ddp, 100 * kTolerance);
  if (GetParam() != "smolvla") return;
  const std::string bf16 = f + " --optimizer.lr=1e-3 --steps=3 --policy.load_vlm_weights=true";
  const Params ddp16 = load_params(final_model(train(dir.path, "ddp16", bf16)));
  const Params sharded16 = load_params(final_model(train(dir.path, "sharded16", bf16 + " --parallelism.dp_shard=2")));
  ASSERT_FALSE(ddp16.empty() || sharded16.empty());
  EXPECT_EQ(sharded16.at("model.vlm_with_expert.lm_expert.layers.0.mlp.down_proj.weight").scalar_type(), torch::kBFloat16);
  double num = 0, den = 0;
  for (const auto& [k, t] : ddp16) {
    num += (t.to(torch::kDouble) - sharded16.at(k).to(torch::kDouble)).pow(2).sum().item<double>();
    den += t.to(torch::kDouble).pow(2).sum().item<double>();
  }
  std::printf("smolvla, bfloat16 backbone: sharded vs DDP parameters differ by %.3g relative\n", std::sqrt(num / den));
  EXPECT_LE(std::sqrt(num / den), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Policies, TrainShardedPolicy, ::testing::Values("diffusion", "vqbet", "smolvla"));
