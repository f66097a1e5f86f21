// A small model shared by the distributed tests and their helper: Linear layers, a BatchNorm, a
// parameter no rank uses and one used only on rank 1.
#pragma once

#include <torch/torch.h>

namespace lerobot_test {

struct TinyNetImpl : torch::nn::Module {
  TinyNetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(8, 16));
    bn = register_module("bn", torch::nn::BatchNorm1d(16));
    fc2 = register_module("fc2", torch::nn::Linear(16, 16));
    fc3 = register_module("fc3", torch::nn::Linear(16, 4));
    unused = register_parameter("unused", torch::randn({5}));
    rank1_only = register_parameter("rank1_only", torch::randn({4}));
  }
  // Mean loss of one rank's batch; the rank1_only term joins the graph only when use_extra.
  torch::Tensor loss(const torch::Tensor& x, const torch::Tensor& y, bool use_extra) {
    auto h = torch::relu(bn(fc1(x)));
    auto out = fc3(torch::tanh(fc2(h)));
    if (use_extra) out = out * rank1_only;
    return torch::mse_loss(out, y);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  torch::nn::BatchNorm1d bn{nullptr};
  torch::Tensor unused, rank1_only;
};
TORCH_MODULE(TinyNet);

// The global batch of micro-step `micro`: rank r takes rows [r*per_rank, (r+1)*per_rank).
inline std::pair<torch::Tensor, torch::Tensor> global_batch(int micro, int world, int per_rank) {
  torch::manual_seed(1000 + micro);
  return {torch::randn({world * per_rank, 8}), torch::randn({world * per_rank, 4})};
}

// The model every rank ends up with after broadcast_parameters (rank 0's initialisation).
inline TinyNet make_net(int seed) {
  torch::manual_seed(seed);
  TinyNet net;
  net->eval();  // BatchNorm on running stats: per-rank batches then add up to the global batch
  return net;
}

}  // namespace lerobot_test
