// The Bottleneck ResNets (resnet50/101/152) against torchvision itself (Debian's
// python3-torchvision, run at test time): the same tensor names and shapes, and the same layer4
// features from the same weights, for ACT's layout (FrozenBatchNorm2d, torchvision names, the last
// stride replaced by dilation) and Diffusion's (BatchNorm2d, nn.Sequential names); and the policies
// built on them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/diffusion/modeling_diffusion.h"
#include "lerobot/policies/resnet_arch.h"
#include "lerobot/policies/resnet_backbone.h"
#include "policy_test_helpers.h"
#include "support/run_command.h"

namespace lerobot {
namespace {

namespace stdfs = std::filesystem;
using Shapes = std::map<std::string, std::vector<int64_t>>;

// Python that writes a torchvision model's state dict as safetensors (no safetensors package on
// Debian 12: the format is an 8-byte header length, a JSON header and the raw little-endian data).
const char* kSaveSafetensors =
    "import json, struct, torch, torchvision\n"
    "from torchvision.ops import FrozenBatchNorm2d\n"
    "def save(path, sd):\n"
    "    head, blobs, off = {}, [], 0\n"
    "    for k, t in sd.items():\n"
    "        b = t.contiguous().numpy().tobytes()\n"
    "        head[k] = {\"dtype\": {torch.float32: \"F32\", torch.int64: \"I64\"}[t.dtype], \"shape\": list(t.shape),"
    " \"data_offsets\": [off, off + len(b)]}\n"
    "        off += len(b)\n"
    "        blobs.append(b)\n"
    "    h = json.dumps(head).encode()\n"
    "    h += b\" \" * (-len(h) % 8)\n"
    "    with open(path, \"wb\") as f:\n"
    "        f.write(struct.pack(\"<Q\", len(h)) + h + b\"\".join(blobs))\n"
    "def randomize(m):\n"  // batch-norm terms away from their 1/0 defaults, so a misplaced one shows
    "    with torch.no_grad():\n"
    "        for mod in m.modules():\n"
    "            if isinstance(mod, (torch.nn.BatchNorm2d, FrozenBatchNorm2d)):\n"
    "                mod.weight.uniform_(0.5, 1.5); mod.bias.uniform_(-0.2, 0.2)\n"
    "                mod.running_mean.uniform_(-0.2, 0.2); mod.running_var.uniform_(0.5, 2.0)\n"
    "    return m\n";

Shapes shapes_of(torch::nn::Module& m) {
  Shapes s;
  for (auto& p : m.named_parameters(true)) s[p.key()] = p.value().sizes().vec();
  for (auto& b : m.named_buffers(true)) s[b.key()] = b.value().sizes().vec();
  return s;
}

torch::Tensor read_f32(const stdfs::path& path, std::vector<int64_t> shape) {
  auto t = torch::empty(shape);
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(t.data_ptr<float>()), std::streamsize(t.numel() * sizeof(float)));
  EXPECT_EQ(f.gcount(), std::streamsize(t.numel() * sizeof(float))) << path << " is short";
  return t;
}

// Largest |a - b| relative to b's largest magnitude.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

struct TorchvisionRun {
  std::string name;          // resnet50, ...
  bool frozen_dilated;       // ACT: FrozenBatchNorm2d, replace_stride_with_dilation=[F, F, T]
  std::vector<int64_t> out;  // layer4 output shape for the (2, 3, 96, 80) input
};

// torchvision builds each model, randomizes it, writes its weights, an input and its layer4
// output; ours loads the weights and must give the same output.
TEST(ResNetBottleneck, FeaturesEqualTorchvisionsFromTheSameWeights) {
  const auto dir = stdfs::path(testing::make_temp_dir("tv_bottleneck"));
  const std::vector<TorchvisionRun> runs = {
      {"resnet50", true, {2, 2048, 6, 5}},   // ACT: /16 with the dilated layer4
      {"resnet50", false, {2, 2048, 3, 3}},  // Diffusion: /32, ceil
  };
  std::string code = std::string(kSaveSafetensors) + "torch.manual_seed(3)\nx = torch.rand(2, 3, 96, 80)\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const std::string stem = (dir / std::to_string(i)).string();
    code += std::string("m = randomize(torchvision.models.") + r.name + "(weights=None" +
            (r.frozen_dilated ? ", replace_stride_with_dilation=[False, False, True], norm_layer=FrozenBatchNorm2d" : "") +
            ")).eval()\n"
            "save(\"" + stem + ".safetensors\", m.state_dict())\n"
            "with torch.no_grad():\n"
            "    y = torch.nn.Sequential(*list(m.children())[:-2])(x)\n"
            "print(list(y.shape))\n"
            "y.contiguous().numpy().tofile(\"" + stem + ".out\")\n";
  }
  code += "x.numpy().tofile(\"" + (dir / "x.in").string() + "\")\n";
  std::istringstream printed(testing::run_python(code));
  const auto x = read_f32(dir / "x.in", {2, 3, 96, 80});
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    SCOPED_TRACE(r.name + (r.frozen_dilated ? " frozen, dilated" : " batch norm"));
    std::string shape_line;
    std::getline(printed, shape_line);
    std::ostringstream want_shape;
    want_shape << "[" << r.out[0] << ", " << r.out[1] << ", " << r.out[2] << ", " << r.out[3] << "]";
    ASSERT_EQ(shape_line, want_shape.str()) << "torchvision's layer4 shape";
    ResNetOptions o;
    o.name = r.name;
    o.norm = r.frozen_dilated ? ResNetNorm::kFrozenBatchNorm : ResNetNorm::kBatchNorm;
    o.sequential_names = !r.frozen_dilated;
    o.dilate_layer4 = r.frozen_dilated;
    ResNetBackbone ours(o);
    ours->eval();
    EXPECT_EQ(ours->out_channels(), 2048);
    const auto file = (dir / (std::to_string(i) + ".safetensors")).string();
    const auto before = ours->forward(x);
    ours->load_torchvision_weights(file);
    torch::NoGradGuard no_grad;
    const auto got = ours->forward(x);
    const auto want = read_f32(dir / (std::to_string(i) + ".out"), r.out);
    ASSERT_EQ(got.sizes().vec(), r.out);
    EXPECT_LT(relative_error(got, want), 1e-4) << "our features differ from torchvision's";
    EXPECT_GT(relative_error(before, want), 1e-2) << "a random init already matched: the check could not fail";
  }
}

// Every tensor name and shape of torchvision's resnet50/101/152 (less fc) is ours, and no other;
// a network with the wrong block counts or widths has other names or shapes.
TEST(ResNetBottleneck, StateDictNamesAndShapesAreTorchvisions) {
  const std::string code =
      "import json, torchvision\n"
      "from torchvision.ops import FrozenBatchNorm2d\n"
      "out = {}\n"
      "for n in (\"resnet50\", \"resnet101\", \"resnet152\"):\n"
      "    sd = getattr(torchvision.models, n)(weights=None, norm_layer=FrozenBatchNorm2d).state_dict()\n"
      "    out[n] = {k: list(v.shape) for k, v in sd.items() if not k.startswith(\"fc.\")}\n"
      "print(json.dumps(out))\n";
  const Json printed = Json::parse(testing::run_python(code));
  for (const std::string name : {"resnet50", "resnet101", "resnet152"}) {
    SCOPED_TRACE(name);
    ResNetBackbone ours(name);
    const Shapes have = shapes_of(*ours);
    Shapes want;
    for (const auto& kv : printed.at(name).items()) want[kv.key()] = kv.value().get<std::vector<int64_t>>();
    EXPECT_GT(want.size(), 250u);  // resnet50: 53 convolutions and 53 frozen norms of 4 tensors
    EXPECT_EQ(have, want);
    EXPECT_EQ(find_resnet_arch(name)->out_channels(), 2048);
  }
}

// A state-dict entry's shape; empty (and a failure naming the key) when there is none.
template <typename Policy>
std::vector<int64_t> shape_in(Policy& policy, const std::string& key) {
  const auto sd = policy.state_dict();
  const auto it = sd.find(key);
  if (it == sd.end()) {
    ADD_FAILURE() << "no " << key << " in the state dict";
    return {};
  }
  return it->second.sizes().vec();
}

TEST(ResNetBottleneck, ActAndDiffusionBuildOnResnet50) {
  torch::manual_seed(5);
  auto act = testing::small_act_config(1, 64);
  act.vision_backbone = "resnet50";
  act.replace_final_stride_with_dilation = true;
  act.validate();
  ACTPolicy act_policy(act);
  EXPECT_EQ(shape_in(act_policy, "model.encoder_img_feat_input_proj.weight"), (std::vector<int64_t>{64, 2048, 1, 1}));
  EXPECT_EQ(shape_in(act_policy, "model.backbone.layer4.2.conv3.weight"), (std::vector<int64_t>{2048, 512, 1, 1}));
  const auto out = act_policy.forward(testing::random_act_batch(act, 2, 1));
  EXPECT_TRUE(std::isfinite(out.loss.item<double>()));

  auto diff = testing::small_diffusion_config();
  diff.vision_backbone = "resnet50";
  diff.validate();
  DiffusionPolicy diff_policy(diff);
  EXPECT_EQ(shape_in(diff_policy, "diffusion.rgb_encoder.0.pool.nets.weight"),
            (std::vector<int64_t>{diff.spatial_softmax_num_keypoints, 2048, 1, 1}));
  EXPECT_EQ(shape_in(diff_policy, "diffusion.rgb_encoder.0.backbone.7.2.bn3.running_var"), (std::vector<int64_t>{2048}));
  EXPECT_TRUE(std::isfinite(diff_policy.forward(testing::random_diffusion_batch(diff, 2, 1)).loss.item<double>()));
}

TEST(ResNetBottleneck, BasicBlockDilationAndUnknownNamesAreRefusedNamingTheFlag) {
  auto expect_usage = [](auto&& build, const std::string& flag, const std::string& needle) {
    try {
      build();
      ADD_FAILURE() << "accepted; wanted an error naming " << flag;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(e.where().find(flag), std::string::npos) << e.where();
      EXPECT_NE((std::string(e.what()) + e.fix()).find(needle), std::string::npos) << e.what() << " | " << e.fix();
    }
  };
  auto act = testing::small_act_config(1, 64);
  act.replace_final_stride_with_dilation = true;  // resnet18: BasicBlock
  expect_usage([&] { ACTPolicy p(act); }, "policy.replace_final_stride_with_dilation", "BasicBlock");
  act.replace_final_stride_with_dilation = false;
  for (const std::string bad : {"resnext50_32x4d", "resnet19", "vit_b_16"}) {
    act.vision_backbone = bad;
    expect_usage([&] { act.validate(); }, "policy.vision_backbone", "resnet152");
    auto diff = testing::small_diffusion_config();
    diff.vision_backbone = bad;
    expect_usage([&] { diff.validate(); }, "policy.vision_backbone", "resnet50");
  }
}

}  // namespace
}  // namespace lerobot
