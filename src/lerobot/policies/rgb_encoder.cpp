// Camera encoder shared by Diffusion Policy and VQ-BeT (see rgb_encoder.h).
#include "lerobot/policies/rgb_encoder.h"

#include <cmath>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
// Spatial size after the ResNet stem and the three stride-2 stages (conv 7/2/3, maxpool 3/2/1,
// conv 3/2/1 x3): each halves with floor((n - 1) / 2) + 1. LeRobot measures it with a dry run,
// whose side effect on the batch-norm statistics RgbEncoderImpl::run_sizing_pass() reproduces.
int64_t resnet_out_size(int64_t n) {
  for (int i = 0; i < 5; ++i) n = (n - 1) / 2 + 1;
  return n;
}
}  // namespace

// ---- SpatialSoftmax --------------------------------------------------------------------------

SpatialSoftmaxImpl::SpatialSoftmaxImpl(int64_t channels, int64_t height, int64_t width, int64_t num_kp)
    : h_(height), w_(width), out_c_(num_kp) {
  nets = register_module("nets", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, num_kp, 1)));
  // numpy meshgrid(linspace(-1, 1, W), linspace(-1, 1, H)) flattened row-major: x varies fastest.
  auto xs = torch::linspace(-1.0, 1.0, width, torch::kFloat64);
  auto ys = torch::linspace(-1.0, 1.0, height, torch::kFloat64);
  auto px = xs.unsqueeze(0).expand({height, width}).reshape({height * width, 1});
  auto py = ys.unsqueeze(1).expand({height, width}).reshape({height * width, 1});
  pos_grid = register_buffer("pos_grid", torch::cat({px, py}, 1).to(torch::kFloat32));
}

torch::Tensor SpatialSoftmaxImpl::forward(const torch::Tensor& features) {
  auto f = nets(features).reshape({-1, h_ * w_});
  auto attention = torch::softmax(f, -1);
  return attention.matmul(pos_grid).view({-1, out_c_, 2});
}

// ---- RGB encoder --------------------------------------------------------------------------------

torch::Tensor random_crop(const torch::Tensor& x, int64_t th, int64_t tw, bool on_device) {
  const int64_t H = x.size(-2), W = x.size(-1);
  if (H == th && W == tw) return x;  // torchvision draws nothing then
  if (on_device) {
    const auto opts = torch::TensorOptions().dtype(torch::kLong).device(x.device());
    const torch::Tensor top = torch::randint(0, H - th + 1, {1}, opts);
    const torch::Tensor left = torch::randint(0, W - tw + 1, {1}, opts);
    return x.index_select(-2, torch::arange(th, opts).add_(top)).index_select(-1, torch::arange(tw, opts).add_(left));
  }
  // RandomCrop.get_params: top, then left, each from the default (CPU) generator.
  const int64_t top = torch::randint(0, H - th + 1, {1}).item<int64_t>();
  const int64_t left = torch::randint(0, W - tw + 1, {1}).item<int64_t>();
  return x.narrow(-2, top, th).narrow(-1, left, tw);
}

RgbEncoderImpl::RgbEncoderImpl(const RgbEncoderOptions& o, const std::string& image_key)
    : resize_(o.resize_shape),
      crop_(o.crop_shape),
      crop_is_random_(o.crop_is_random),
      batch_norm_(!o.use_group_norm) {
  const auto& shape = o.image_shape;  // (C, H, W)
  if (shape.size() != 3 || shape[0] != 3)
    throw_usage("camera '" + image_key + "' must be (3, H, W) for the ResNet encoder", "policy.input_features");
  ResNetOptions ro;
  ro.name = o.vision_backbone;
  ro.norm = o.use_group_norm ? ResNetNorm::kGroupNorm : ResNetNorm::kBatchNorm;
  ro.sequential_names = true;
  backbone = register_module("backbone", ResNetBackbone(ro));
  int64_t h = shape[1], w = shape[2];
  if (resize_) h = (*resize_)[0], w = (*resize_)[1];
  if (crop_) {
    if (!resize_ && ((*crop_)[0] > h || (*crop_)[1] > w))
      throw_usage("crop_shape [" + std::to_string((*crop_)[0]) + ", " + std::to_string((*crop_)[1]) +
                      "] does not fit the images (" + std::to_string(h) + "x" + std::to_string(w) + ")",
                  "policy.crop_shape", "pass a smaller --policy.crop_shape or null");
    h = (*crop_)[0], w = (*crop_)[1];
  }
  backbone_h_ = h, backbone_w_ = w;
  const int64_t kp = o.spatial_softmax_num_keypoints;
  pool = register_module("pool", SpatialSoftmax(backbone->out_channels(), resnet_out_size(h), resnet_out_size(w), kp));
  feature_dim_ = kp * 2;
  out = register_module("out", torch::nn::Linear(kp * 2, feature_dim_));
}

void RgbEncoderImpl::run_sizing_pass() {
  if (!batch_norm_ || resnet_out_size(backbone_h_) * resnet_out_size(backbone_w_) == 1) return;
  torch::NoGradGuard no_grad;
  const bool was_training = backbone->is_training();
  backbone->train(true);
  const auto options = backbone->parameters().front().options();
  backbone(torch::zeros({1, 3, backbone_h_, backbone_w_}, options));
  backbone->train(was_training);
}

torch::Tensor RgbEncoderImpl::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  if (resize_ && (x.size(-2) != (*resize_)[0] || x.size(-1) != (*resize_)[1])) {
    namespace F = torch::nn::functional;
    x = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{(*resize_)[0], (*resize_)[1]})
                              .mode(torch::kBilinear)
                              .align_corners(false)
                              .antialias(true));
  }
  if (crop_) {
    const int64_t th = (*crop_)[0], tw = (*crop_)[1], H = x.size(-2), W = x.size(-1);
    if (is_training() && crop_is_random_) {
      x = random_crop(x, th, tw, device_side_crop_offsets);
    } else {  // CenterCrop: int(round((H - th) / 2)) with round-half-even
      const auto top = static_cast<int64_t>(std::nearbyint((H - th) / 2.0));
      const auto left = static_cast<int64_t>(std::nearbyint((W - tw) / 2.0));
      x = x.narrow(-2, top, th).narrow(-1, left, tw);
    }
  }
  auto kp = pool(backbone(x)).flatten(1);
  return torch::relu(out(kp));
}

}  // namespace lerobot
