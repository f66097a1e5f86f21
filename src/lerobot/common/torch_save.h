// Writes what Python's torch.save writes for a dict of plain values and lists of tensors (zip
// container, protocol-2 pickle with torch._utils._rebuild_tensor_v2 and 'storage' persistent ids),
// so torch.load(..., weights_only=True) accepts it. LibTorch's own pickle_save tags dicts and
// tensor lists with torch.jit._pickle globals, which the weights_only loader refuses.
#pragma once

#include <torch/types.h>

#include <string>
#include <variant>
#include <vector>

#include "lerobot/common/fs.h"

namespace lerobot {

using TorchSaveValue = std::variant<double, int64_t, bool, std::vector<torch::Tensor>>;
using TorchSaveDict = std::vector<std::pair<std::string, TorchSaveValue>>;  // insertion order kept

// Writes `dict` atomically to `file` (tensors copied to CPU, contiguous).
void torch_save_dict(const fs::path& file, const TorchSaveDict& dict);

}  // namespace lerobot
