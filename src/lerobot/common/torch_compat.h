// LibTorch version shims: the few places where 1.13 (Debian, CPU) and 2.x (CUDA builds) differ.
#pragma once

#include <torch/version.h>

// ===== distributed (c10d) — owned by src/lerobot/distributed ======================================
// - 1.13: ProcessGroupGloo/NCCL derive from c10d::ProcessGroup; 2.x: from c10d::Backend. Code in
//   distributed/ holds the concrete classes and calls their collectives directly, which compiles on
//   both; name the base only through lerobot::compat::C10dBackendBase (define LEROBOT_C10D_COMPAT
//   after including the c10d headers).
// - Headers live in <torch/csrc/distributed/c10d/...> from 1.13 on (not <c10d/...>).
// - TCPStoreOptions: assign fields one by one (2.x adds useLibUV/masterListenFd). useLibUV
//   (2.2+) defaults to true from 2.4 on, and a LibTorch built without libuv (Debian's 2.6) then
//   refuses to create any store: set it through set_tcpstore_libuv (a no-op before 2.2).
// - Post-accumulate-grad hooks (2.1+) are not used; the AccumulateGrad post-hook works on both.
// - NCCL error-handling variables were renamed TORCH_NCCL_* in 2.2.
// - ProcessGroupNCCL::shutdown() exists only in 2.x: call it through shutdown_backend.
#include <type_traits>
#include <utility>

#ifndef LEROBOT_TORCH_AT_LEAST
#define LEROBOT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
#endif

namespace lerobot {
namespace compat {
#if LEROBOT_TORCH_AT_LEAST(2, 2)
constexpr const char* kNcclAsyncErrorHandlingEnv = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
#else
constexpr const char* kNcclAsyncErrorHandlingEnv = "NCCL_ASYNC_ERROR_HANDLING";
#endif

// ===== training_state/ files — owned by src/lerobot/optim =====================================
// Python LeRobot loads scheduler_state.json and optimizer_param_groups.json with strict key sets,
// so they are written in the format of the torch that will read them: the LibTorch this is built
// with when LeRobot can run on it (2.7+; pip PyTorch's prefix on GPU machines), else the newest
// torch LeRobot 0.6 allows (< 2.12), which is what `pip install lerobot` resolves to.
inline constexpr bool kWritesTorch27StateFormat = LEROBOT_TORCH_AT_LEAST(2, 7) && !LEROBOT_TORCH_AT_LEAST(2, 9);

template <class Options, class = void>
struct HasUseLibUV : std::false_type {};
template <class Options>
struct HasUseLibUV<Options, std::void_t<decltype(std::declval<Options&>().useLibUV)>> : std::true_type {};
// Sets c10d::TCPStoreOptions::useLibUV where the field exists; returns whether it does.
template <class Options>
bool set_tcpstore_libuv(Options& options, bool on) {
  if constexpr (HasUseLibUV<Options>::value) {
    options.useLibUV = on;
    return true;
  } else {
    (void)options;
    (void)on;
    return false;
  }
}

template <class Backend, class = void>
struct HasShutdown : std::false_type {};
template <class Backend>
struct HasShutdown<Backend, std::void_t<decltype(std::declval<Backend&>().shutdown())>> : std::true_type {};
// Backend::shutdown() where it exists (ProcessGroupNCCL in 2.x: tears the communicators down
// before the CUDA context goes, instead of a warning at exit); a no-op on 1.13.
template <class Backend>
void shutdown_backend(Backend& backend) {
  if constexpr (HasShutdown<Backend>::value) backend.shutdown();
  else (void)backend;
}
}  // namespace compat
}  // namespace lerobot

#if defined(LEROBOT_C10D_COMPAT) && !defined(LEROBOT_C10D_COMPAT_DONE)
#define LEROBOT_C10D_COMPAT_DONE
namespace lerobot {
namespace compat {
#if TORCH_VERSION_MAJOR >= 2
using C10dBackendBase = ::c10d::Backend;
#else
using C10dBackendBase = ::c10d::ProcessGroup;
#endif
}  // namespace compat
}  // namespace lerobot
#endif
// ===== end distributed ============================================================================

// ===== CUDA graphs — owned by src/lerobot/common/device_graph_torch.cpp =========================
// - at::cuda::CUDAGraph::capture_begin takes a stream-capture mode from 2.0 on; thread-local mode
//   lets the loader's threads allocate pinned memory while the training thread captures. 1.13
//   captures in global mode only (graphs are used on 2.x CUDA builds; 1.13 builds are CPU-only).
#define LEROBOT_CUDAGRAPH_HAS_CAPTURE_MODE LEROBOT_TORCH_AT_LEAST(2, 0)
// ===== end CUDA graphs ============================================================================

// ===== policies (torch::nn) — owned by src/lerobot/policies =======================================
// Only what policies/ and bench/act_latency need; both spellings are identical on 1.13 and 2.x
// today, kept here so a future difference is fixed in one place.
#if defined(LEROBOT_POLICIES_COMPAT) || !defined(LEROBOT_C10D_COMPAT)
#ifndef LEROBOT_POLICIES_COMPAT_DONE
#define LEROBOT_POLICIES_COMPAT_DONE
#include <torch/torch.h>
namespace lerobot {
// Inference without autograd bookkeeping (c10::InferenceMode exists from 1.9 on). Tensors made
// under it cannot enter autograd later, so policies never cache tensors created under it.
using InferenceGuard = c10::InferenceMode;
// torchvision's ResNet conv init: kaiming_normal_(mode="fan_out", nonlinearity="relu").
inline void kaiming_normal_fan_out_relu(torch::Tensor& w) {
  torch::nn::init::kaiming_normal_(w, 0.0, torch::kFanOut, torch::kReLU);
}
namespace compat {
// at::scaled_dot_product_attention (2.0+): one operator forward and one backward node where the
// composite attention takes six of each; on CUDA a flash or memory-efficient kernel. q (B, H, Lq,
// E), k and v (B, H, Lk, E), `allowed` bool, broadcastable to (B, H, Lq, Lk), true = attend
// (undefined: all), the default 1/sqrt(E) scale. Only called where kHasFusedAttention.
inline constexpr bool kHasFusedAttention = LEROBOT_TORCH_AT_LEAST(2, 0);
inline torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const torch::Tensor& allowed, double dropout_p) {
#if LEROBOT_TORCH_AT_LEAST(2, 0)
  const c10::optional<torch::Tensor> mask = allowed.defined() ? c10::optional<torch::Tensor>(allowed) : c10::nullopt;
  return at::scaled_dot_product_attention(q, k, v, mask, dropout_p, /*is_causal=*/false);
#else
  (void)k, (void)v, (void)allowed, (void)dropout_p;
  TORCH_CHECK(false, "fused attention needs LibTorch 2.0 or newer");
  return q;
#endif
}
}  // namespace compat
}  // namespace lerobot
#endif
#endif
// ===== end policies ===============================================================================

// ===== autocast — owned by src/lerobot/train ======================================================
// 1.13 has per-device setters (set_cpu_enabled / set_autocast_cpu_dtype / set_autocast_gpu_dtype);
// 2.4+ takes the device type as an argument and deprecates the old spellings.
#if defined(LEROBOT_AUTOCAST_COMPAT) && !defined(LEROBOT_AUTOCAST_COMPAT_DONE)
#define LEROBOT_AUTOCAST_COMPAT_DONE
#include <ATen/autocast_mode.h>
namespace lerobot {
namespace compat {
inline void set_autocast(bool cuda, bool enabled, at::ScalarType dtype) {
#if LEROBOT_TORCH_AT_LEAST(2, 4)
  const auto dev = cuda ? at::kCUDA : at::kCPU;
  at::autocast::set_autocast_enabled(dev, enabled);
  if (enabled) at::autocast::set_autocast_dtype(dev, dtype);
#else
  if (cuda) {
    at::autocast::set_enabled(enabled);
    if (enabled) at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    if (enabled) at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}
// The calling thread's autocast state for the CPU or CUDA (activation checkpointing recomputes
// under the state of the first run).
inline bool autocast_enabled(bool cuda) {
#if LEROBOT_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
#else
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}
inline at::ScalarType autocast_dtype(bool cuda) {
#if LEROBOT_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU);
#else
  return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}
}  // namespace compat
}  // namespace lerobot
#endif
// ===== end autocast ===============================================================================

// ===== optim (torch::optim) — owned by src/lerobot/optim ==========================================
// torch::optim::Optimizer::state() is keyed by std::string (the TensorImpl address printed by
// c10::guts::to_string) on 1.13 and by void* (the TensorImpl address) on 2.x. The key type is
// read off the map itself, so no version number is needed. Define LEROBOT_OPTIM_COMPAT before
// including this header to get it.
#if defined(LEROBOT_OPTIM_COMPAT) && !defined(LEROBOT_OPTIM_COMPAT_DONE)
#define LEROBOT_OPTIM_COMPAT_DONE
#include <ATen/Functions.h>
#include <torch/optim/optimizer.h>

#include <sstream>
#include <string>
#include <type_traits>
namespace lerobot {
namespace compat {
using OptimStateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;
using OptimStateKey = typename OptimStateMap::key_type;
template <class Key = OptimStateKey>
inline Key optim_state_key(const at::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;  // what c10::guts::to_string(TensorImpl*) produces
    os << p.unsafeGetTensorImpl();
    return os.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

// self[i] *= scalar for a 0-d tensor `scalar` (on the tensors' device) without reading it on the
// host: one _foreach_mul_ from 2.1 on; before, the list-by-list _foreach_mul_ with the scalar
// repeated (one operator; its kernel loops over the tensors, as every CPU foreach kernel does).
inline void foreach_mul_by_tensor_(at::TensorList self, const at::Tensor& scalar) {
#if LEROBOT_TORCH_AT_LEAST(2, 1)
  at::_foreach_mul_(self, scalar);
#else
  at::_foreach_mul_(self, std::vector<at::Tensor>(self.size(), scalar));
#endif
}

// Fused Adam/AdamW kernels (torch.optim's fused=True): _fused_adam_ exists from 2.0 (CUDA) and
// _fused_adamw_ from 2.1 (CUDA; CPU from 2.4). `steps` are float32 tensors already incremented
// for this step, on the parameters' device.
#if LEROBOT_TORCH_AT_LEAST(2, 1)
inline constexpr bool kHasFusedAdam = true;
// `found_inf` (0-d float, optional): where non-zero the kernels leave everything unchanged. `lr`: a
// double, or (the tensor-lr overloads, 2.4+) a 0-d float32 tensor on the parameters' device.
template <class Lr>
inline void fused_adam_any_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                               at::TensorList exp_avg_sqs, at::TensorList steps, const Lr& lr, double beta1,
                               double beta2, double weight_decay, double eps, bool decoupled_weight_decay,
                               const at::Tensor& found_inf) {
  const std::vector<at::Tensor> no_max_exp_avg_sqs;
  const c10::optional<at::Tensor> inf = found_inf.defined() ? c10::optional<at::Tensor>(found_inf) : c10::nullopt;
  if (decoupled_weight_decay)
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, no_max_exp_avg_sqs, steps, lr, beta1, beta2,
                      weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/c10::nullopt, inf);
  else
    at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, no_max_exp_avg_sqs, steps, lr, beta1, beta2,
                     weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/c10::nullopt, inf);
}
inline void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                        at::TensorList exp_avg_sqs, at::TensorList steps, double lr, double beta1,
                        double beta2, double weight_decay, double eps, bool decoupled_weight_decay,
                        const at::Tensor& found_inf) {
  fused_adam_any_lr_(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
                     decoupled_weight_decay, found_inf);
}
#else
inline constexpr bool kHasFusedAdam = false;
inline void fused_adam_(at::TensorList, at::TensorList, at::TensorList, at::TensorList, at::TensorList, double,
                        double, double, double, double, bool, const at::Tensor&) {
  TORCH_CHECK(false, "fused Adam/AdamW needs LibTorch 2.1 or newer");
}
#endif
// The same kernels reading the lr from the device (_fused_adam(w)_.tensor_lr, in every LibTorch
// from 2.4): a captured step then follows an lr that the host changes between replays.
#if LEROBOT_TORCH_AT_LEAST(2, 4)
inline constexpr bool kHasFusedAdamTensorLr = true;
inline void fused_adam_tensor_lr_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                                  at::TensorList exp_avg_sqs, at::TensorList steps, const at::Tensor& lr,
                                  double beta1, double beta2, double weight_decay, double eps,
                                  bool decoupled_weight_decay, const at::Tensor& found_inf) {
  fused_adam_any_lr_(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
                     decoupled_weight_decay, found_inf);
}
#else
inline constexpr bool kHasFusedAdamTensorLr = false;
inline void fused_adam_tensor_lr_(at::TensorList, at::TensorList, at::TensorList, at::TensorList, at::TensorList,
                                  const at::Tensor&, double, double, double, double, bool, const at::Tensor&) {
  TORCH_CHECK(false, "fused Adam/AdamW with a tensor lr needs LibTorch 2.4 or newer");
}
#endif
}  // namespace compat
}  // namespace lerobot
#endif
// ===== end optim ==================================================================================
