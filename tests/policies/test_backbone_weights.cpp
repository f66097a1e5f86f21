// pretrained_backbone_weights given as a torchvision weights name: loaded from the file the
// installed resolver gives (the Hub client in `train`), checked against the backbone's ResNet, and
// refused plainly where no resolver is installed.
#include <gtest/gtest.h>

#include <filesystem>

#include "lerobot/common/error.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/act/modeling_act.h"
#include "lerobot/policies/resnet_backbone.h"
#include "policy_test_helpers.h"

namespace lerobot {
namespace {

namespace stdfs = std::filesystem;
using testing::make_temp_dir;
using testing::small_act_config;

// Removes the resolver a test installed, whatever happens in it.
struct ResolverGuard {
  ~ResolverGuard() { set_backbone_weights_resolver(nullptr); }
};

std::string error_text(const Error& e) { return std::string(e.what()) + " | " + e.where() + " | " + e.fix(); }

TEST(BackboneWeights, TorchvisionNameArch) {
  EXPECT_EQ(torchvision_weights_arch("ResNet18_Weights.IMAGENET1K_V1"), "resnet18");
  EXPECT_EQ(torchvision_weights_arch("ResNet34_Weights.DEFAULT"), "resnet34");
  EXPECT_EQ(torchvision_weights_arch("imagenet"), "");
  EXPECT_EQ(torchvision_weights_arch("ResNet18_Weights."), "");
}

TEST(BackboneWeights, NameLoadsTheResolvedFileAndGivesItsFeatures) {
  ResolverGuard guard;
  torch::manual_seed(9);
  ResNetBackbone source("resnet18");
  TensorMap tv;
  for (auto& p : source->named_parameters(true)) tv[p.key()] = p.value().detach().clone().uniform_(-0.1, 0.1);
  for (auto& b : source->named_buffers(true)) tv[b.key()] = b.value().clone().uniform_(0.5, 1.5);
  tv["fc.weight"] = torch::zeros({1000, 512});
  tv["fc.bias"] = torch::zeros({1000});
  const auto path = (stdfs::path(make_temp_dir("tv_weights")) / "model.safetensors").string();
  save_safetensors(path, tv);
  std::vector<std::string> asked;
  set_backbone_weights_resolver([&](const std::string& name, const std::string& flag) {
    asked.push_back(name + " " + flag);
    return path;
  });
  auto cfg = small_act_config(1);
  cfg.pretrained_backbone_weights = "ResNet18_Weights.IMAGENET1K_V1";
  ACTPolicy policy(cfg);
  ASSERT_EQ(asked, std::vector<std::string>{"ResNet18_Weights.IMAGENET1K_V1 policy.pretrained_backbone_weights"});
  // The same features as a torchvision-layout ResNet18 built from the file's tensors by hand.
  ResNetBackbone reference("resnet18");
  {
    torch::NoGradGuard no_grad;
    for (auto& p : reference->named_parameters(true)) p.value().copy_(tv.at(p.key()));
    for (auto& b : reference->named_buffers(true)) b.value().copy_(tv.at(b.key()));
  }
  auto sd = policy.state_dict();
  EXPECT_TRUE(torch::equal(sd.at("model.backbone.layer2.0.downsample.1.running_mean"),
                           tv.at("layer2.0.downsample.1.running_mean")));
  ResNetBackbone loaded("resnet18");
  load_backbone_weights_option(*loaded, cfg.pretrained_backbone_weights, "policy.pretrained_backbone_weights");
  const auto x = torch::rand({2, 3, 64, 64});
  EXPECT_TRUE(torch::allclose(loaded->forward(x), reference->forward(x), 1e-5, 1e-6));
  // A random backbone differs: the comparison above could fail.
  EXPECT_FALSE(torch::allclose(source->forward(x), reference->forward(x), 1e-5, 1e-6));
}

TEST(BackboneWeights, WrongArchUnknownNameAndNoResolverAreUsageErrors) {
  ResolverGuard guard;
  auto cfg = small_act_config(1);
  auto expect_usage = [&](const std::string& weights, const std::string& needle) {
    cfg.pretrained_backbone_weights = weights;
    try {
      ACTPolicy policy(cfg);
      FAIL() << weights << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(e.where(), "policy.pretrained_backbone_weights");
      EXPECT_NE(error_text(e).find(needle), std::string::npos) << error_text(e);
    }
  };
  expect_usage("ResNet18_Weights.IMAGENET1K_V1", "does not fetch");  // no resolver installed
  set_backbone_weights_resolver([](const std::string&, const std::string&) -> std::string {
    ADD_FAILURE() << "the resolver was asked for weights that cannot fit";
    return "";
  });
  expect_usage("ResNet34_Weights.IMAGENET1K_V1", "resnet34 weights, but the vision backbone is resnet18");
  expect_usage("imagenet", "neither a torchvision weights name nor a file");
}

}  // namespace
}  // namespace lerobot
