// ResidualVQ: the two-layer residual vector quantizer of LeRobot's VQ-BeT (vqbet_utils.py, after
// lucidrains' vector-quantize-pytorch) with the settings VQ-BeT uses: Euclidean codebooks updated
// by exponential moving averages (decay 0.8, Laplace smoothing 1e-5), no k-means init, no dead-code
// expiry, commitment weight 1, straight-through gradients. The codebooks are buffers, not
// parameters, under LeRobot's names: layers.<i>._codebook.{initted, cluster_size, embed_avg, embed}.
#pragma once

#include <torch/torch.h>

#include <functional>

namespace lerobot {

// torch::one_hot(index, classes) as `dtype`, made by scatter: torch::one_hot checks its indices on
// the host (a sync per call), scatter does not.
torch::Tensor one_hot_on_device(const torch::Tensor& index, int64_t classes, torch::ScalarType dtype);

// Sums a tensor over the training replicas in place (an all-reduce); empty with one process.
// LeRobot's codebooks sum their EMA statistics over the processes when torch.distributed runs.
using ReplicaSum = std::function<void(torch::Tensor&)>;

class EuclideanCodebookImpl : public torch::nn::Module {
 public:
  EuclideanCodebookImpl(int64_t dim, int64_t codebook_size);
  struct Output {
    torch::Tensor quantize;  // (B, N, D) the nearest codes
    torch::Tensor indices;   // (B, N) int64
  };
  // x (B, N, D). In training with `update`, moves cluster_size / embed_avg / embed towards this
  // batch's assignment (summed over replicas first when `replica_sum` is set).
  Output forward(const torch::Tensor& x, bool update);

  torch::Tensor initted, cluster_size, embed_avg, embed;
  ReplicaSum replica_sum;

 private:
  int64_t codebook_size_;
  double decay_ = 0.8, eps_ = 1e-5;
};
TORCH_MODULE(EuclideanCodebook);

class VectorQuantizeImpl : public torch::nn::Module {
 public:
  VectorQuantizeImpl(int64_t dim, int64_t codebook_size);
  struct Output {
    torch::Tensor quantize;     // (B, N, D), straight-through in training
    torch::Tensor indices;      // (B, N)
    torch::Tensor commit_loss;  // (1,): MSE(code, x) in training, 0 otherwise
  };
  Output forward(const torch::Tensor& x, bool update);
  EuclideanCodebook codebook{nullptr};  // registered as "_codebook"
};
TORCH_MODULE(VectorQuantize);

class ResidualVQImpl : public torch::nn::Module {
 public:
  ResidualVQImpl(int64_t dim, int64_t num_quantizers, int64_t codebook_size);
  struct Output {
    torch::Tensor quantized;  // (B, N, D): the sum of every layer's code
    torch::Tensor indices;    // (B, N, num_quantizers)
    torch::Tensor losses;     // (1, num_quantizers) commitment losses
  };
  // Each layer quantizes what the layers before it left; codebooks update in training unless
  // freeze_codebook is set.
  Output forward(const torch::Tensor& x);
  // indices (M, num_quantizers) -> (num_quantizers, M, D): each layer's code vector.
  torch::Tensor codebook_vectors(const torch::Tensor& indices) const;
  void set_replica_sum(ReplicaSum sum);
  // The freeze_codebook buffer, read on the host (set_frozen writes it).
  bool frozen() const { return frozen_; }
  void set_frozen(bool frozen);
  // Re-reads freeze_codebook after the buffers were overwritten (a checkpoint load).
  void sync_from_buffers();

  torch::nn::ModuleList layers{nullptr};
  torch::Tensor freeze_codebook;

 private:
  std::vector<VectorQuantize> layer_list_;
  bool frozen_ = false;
};
TORCH_MODULE(ResidualVQ);

}  // namespace lerobot
