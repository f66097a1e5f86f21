// Batch entries of the VLA policies (see vla_batch.h).
#include "lerobot/policies/vlm/vla_batch.h"

#include "lerobot/common/error.h"

namespace lerobot {

const torch::Tensor& vla_batch_entry(const Batch& batch, const std::string& key, const std::string& policy) {
  auto it = batch.find(key);
  if (it == batch.end())
    throw_usage("the " + policy + " batch has no '" + key + "'", key,
                key.rfind("observation.language", 0) == 0
                    ? "run the batch through the " + policy + " preprocessor (its tokenizer step makes the language tokens)"
                    : "the dataset must provide it");
  return it->second;
}

torch::Tensor pad_vector(const torch::Tensor& x, int64_t size) {
  if (x.size(-1) >= size) return x;
  return torch::nn::functional::pad(x, torch::nn::functional::PadFuncOptions({0, size - x.size(-1)}));
}

}  // namespace lerobot
