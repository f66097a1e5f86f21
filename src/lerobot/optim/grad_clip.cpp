// clip_grad_norm_ with torch's arithmetic (per-tensor norms, norm of norms, 1e-6 in the coefficient),
// as multi-tensor ops (torch's foreach path): one _foreach_norm, one stack + norm, one multiply.
#define LEROBOT_OPTIM_COMPAT
#include "lerobot/optim/grad_clip.h"

#include <torch/torch.h>

#include "lerobot/common/torch_compat.h"

namespace lerobot {

namespace {
std::vector<torch::Tensor> defined_grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

torch::Tensor norm_of(const std::vector<torch::Tensor>& grads) {
  return at::linalg_vector_norm(torch::stack(at::_foreach_norm(grads, 2)), 2);
}
}  // namespace

torch::Tensor total_grad_norm(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  auto grads = defined_grads(params);
  if (grads.empty()) return torch::zeros({});
  return norm_of(grads);
}

torch::Tensor clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  auto grads = defined_grads(params);
  if (grads.empty()) return torch::zeros({});
  torch::Tensor total = norm_of(grads);
  // Python's `max_norm / t` is t.reciprocal() * max_norm (Tensor.__rtruediv__).
  torch::Tensor coef = torch::clamp_max(torch::reciprocal(total + 1e-6) * max_norm, 1.0);
  compat::foreach_mul_by_tensor_(grads, coef);
  return total;
}

std::optional<size_t> first_nonfinite_grad(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> flags;
  std::vector<size_t> index;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& g = params[i].grad();
    if (!g.defined()) continue;
    flags.push_back(torch::isfinite(g).all().logical_not().to(torch::kCPU));
    index.push_back(i);
  }
  if (flags.empty()) return std::nullopt;
  auto bad = torch::stack(flags).contiguous();
  const bool* p = bad.data_ptr<bool>();
  for (size_t k = 0; k < index.size(); ++k)
    if (p[k]) return index[k];
  return std::nullopt;
}

std::optional<std::string> first_nonfinite_grad_name(const std::vector<torch::Tensor>& params,
                                                     const std::vector<std::string>& names) {
  auto i = first_nonfinite_grad(params);
  if (!i) return std::nullopt;
  return *i < names.size() ? names[*i] : "param " + std::to_string(*i);
}

}  // namespace lerobot
