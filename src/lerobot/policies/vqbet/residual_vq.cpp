// Residual vector quantizer of VQ-BeT (see residual_vq.h).
#include "lerobot/policies/vqbet/residual_vq.h"

#include <c10/core/impl/LocalDispatchKeySet.h>

namespace lerobot {

torch::Tensor one_hot_on_device(const torch::Tensor& index, int64_t classes, torch::ScalarType dtype) {
  auto sizes = index.sizes().vec();
  sizes.push_back(classes);
  return torch::zeros(sizes, index.options().dtype(dtype)).scatter_(-1, index.unsqueeze(-1), 1);
}

EuclideanCodebookImpl::EuclideanCodebookImpl(int64_t dim, int64_t codebook_size) : codebook_size_(codebook_size) {
  // uniform_init: kaiming_uniform_ of a (1, C, D) tensor (fan_in = C·D).
  auto e = torch::empty({1, codebook_size, dim});
  torch::nn::init::kaiming_uniform_(e);
  initted = register_buffer("initted", torch::ones({1}));
  cluster_size = register_buffer("cluster_size", torch::zeros({1, codebook_size}));
  embed_avg = register_buffer("embed_avg", e.clone());
  embed = register_buffer("embed", e);
}

EuclideanCodebookImpl::Output EuclideanCodebookImpl::forward(const torch::Tensor& input, bool update) {
  // The codebook runs in float32 with autocast off (LeRobot's @autocast("cuda", enabled=False)).
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto x = input.to(torch::kFloat);
  const auto flat = x.reshape({1, -1, x.size(-1)});  // (1, B·N, D)
  const auto e = embed.detach();
  // LeRobot's cdist: sqrt(|x|² + |e|² - 2 x·e), negated; the nearest code has the largest value.
  const auto x2 = flat.pow(2).sum(-1);  // (1, M)
  const auto e2 = e.pow(2).sum(-1);     // (1, C)
  const auto xe = torch::matmul(flat, e.transpose(1, 2)).mul(-2);
  const auto dist = (x2.unsqueeze(-1) + e2.unsqueeze(1) + xe).sqrt().neg();
  const auto ind = dist.argmax(-1);  // (1, M)
  const auto quantize = e.index_select(1, ind.view({-1})).view(x.sizes());
  if (is_training() && update) {
    torch::NoGradGuard no_grad;
    auto onehot = one_hot_on_device(ind, codebook_size_, flat.scalar_type());  // (1, M, C)
    auto counts = onehot.sum(1);                                                 // (1, C)
    if (replica_sum) replica_sum(counts);
    cluster_size.lerp_(counts, 1.0 - decay_);
    auto embed_sum = torch::matmul(onehot.transpose(1, 2), flat.detach());  // (1, C, D)
    if (replica_sum) replica_sum(embed_sum);
    embed_avg.lerp_(embed_sum, 1.0 - decay_);
    // Laplace smoothing of the counts, rescaled to their total.
    const auto total = cluster_size.sum(-1, true);
    const auto smoothed = (cluster_size + eps_) / (total + codebook_size_ * eps_) * total;
    embed.copy_(embed_avg / smoothed.unsqueeze(-1));
  }
  return {quantize, ind.view(x.sizes().slice(0, x.dim() - 1))};
}

VectorQuantizeImpl::VectorQuantizeImpl(int64_t dim, int64_t codebook_size) {
  codebook = register_module("_codebook", EuclideanCodebook(dim, codebook_size));
}

VectorQuantizeImpl::Output VectorQuantizeImpl::forward(const torch::Tensor& x, bool update) {
  auto cb = codebook->forward(x, update);
  Output out;
  out.indices = cb.indices;
  if (is_training()) {
    const auto commit = cb.quantize.detach();
    out.quantize = x + (cb.quantize - x).detach();  // straight-through
    out.commit_loss = torch::zeros({1}, x.options()) + torch::mse_loss(commit, x);
  } else {
    out.quantize = cb.quantize;
    out.commit_loss = torch::zeros({1}, x.options());
  }
  return out;
}

ResidualVQImpl::ResidualVQImpl(int64_t dim, int64_t num_quantizers, int64_t codebook_size) {
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < num_quantizers; ++i) {
    layer_list_.push_back(VectorQuantize(dim, codebook_size));
    layers->push_back(layer_list_.back());
  }
  freeze_codebook = register_buffer("freeze_codebook", torch::tensor(false));
}

ResidualVQImpl::Output ResidualVQImpl::forward(const torch::Tensor& x) {
  torch::Tensor quantized_out, residual = x;
  std::vector<torch::Tensor> indices, losses;
  for (auto& layer : layer_list_) {
    auto q = layer->forward(residual, !frozen_);
    residual = residual - q.quantize.detach();
    quantized_out = quantized_out.defined() ? quantized_out + q.quantize : q.quantize;
    indices.push_back(q.indices);
    losses.push_back(q.commit_loss);
  }
  return {quantized_out, torch::stack(indices, -1), torch::stack(losses, -1)};
}

torch::Tensor ResidualVQImpl::codebook_vectors(const torch::Tensor& indices) const {
  std::vector<torch::Tensor> codes;
  for (size_t q = 0; q < layer_list_.size(); ++q)
    codes.push_back(layer_list_[q]->codebook->embed.select(0, 0).index_select(0, indices.select(-1, q).reshape({-1})));
  return torch::stack(codes, 0);
}

void ResidualVQImpl::set_replica_sum(ReplicaSum sum) {
  for (auto& layer : layer_list_) layer->codebook->replica_sum = sum;
}

void ResidualVQImpl::set_frozen(bool frozen) {
  frozen_ = frozen;
  freeze_codebook.fill_(frozen);
}

void ResidualVQImpl::sync_from_buffers() { frozen_ = freeze_codebook.item<bool>(); }

}  // namespace lerobot
