// compute_heldout_loss (see heldout_loss.h).
#include "lerobot/train/heldout_loss.h"

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/datasets/data_loader.h"
#include "lerobot/train/autocast.h"
#include "lerobot/train/batch_prep.h"

namespace lerobot {

HeldOutLoss compute_heldout_loss(Policy& policy, const PolicyProcessors& processors, const HeldOutSet& set,
                                 int64_t batch_size, const torch::Device& device,
                                 const std::string& mixed_precision, ProcessGroup* group, bool lockstep) {
  LEROBOT_CHECK(batch_size >= 1, "held-out batch size must be >= 1");
  const int rank = group ? group->rank() : 0;
  const int world = group ? group->world_size() : 1;
  const auto n = static_cast<int64_t>(set.frames.size());
  const int64_t num_batches = (n + batch_size - 1) / batch_size;
  double loss_sum = 0.0;
  int64_t batches = 0, samples = 0;
  policy.eval();
  {
    torch::NoGradGuard no_grad;
    const int64_t rounds = lockstep ? (num_batches + world - 1) / world : 0;
    for (int64_t b = rank; b < num_batches || b < rounds * world; b += world) {
      const bool counted = b < num_batches;
      const int64_t batch_index = counted ? b : b % num_batches;  // lockstep's extra forward
      std::vector<DatasetItem> items;
      for (int64_t i = batch_index * batch_size; i < std::min(n, (batch_index + 1) * batch_size); ++i)
        items.push_back(set.dataset->get_item(set.frames[static_cast<size_t>(i)]));
      const DataBatch raw = collate(items);
      const Batch batch = prepare_batch(raw.tensors, processors, device, raw.tasks);
      torch::Tensor loss;
      {
        AutocastScope autocast(mixed_precision, device);
        loss = policy.forward(batch).loss;
      }
      if (!counted) continue;
      loss_sum += loss.to(torch::kFloat64).item<double>();
      ++batches;
      samples += static_cast<int64_t>(items.size());
    }
  }
  policy.train();
  if (group && world > 1) {
    auto t = torch::tensor({loss_sum, static_cast<double>(batches), static_cast<double>(samples)},
                           torch::kFloat64)
                 .to(group->device());
    group->all_reduce(t, ReduceOp::kSum);
    t = t.cpu();
    loss_sum = t[0].item<double>();
    batches = static_cast<int64_t>(t[1].item<double>());
    samples = static_cast<int64_t>(t[2].item<double>());
  }
  HeldOutLoss r;
  r.loss = loss_sum / static_cast<double>(std::max<int64_t>(1, batches));
  r.batches = batches;
  r.samples = samples;
  return r;
}

}  // namespace lerobot
