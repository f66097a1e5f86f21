// π0/π0.5 prompts: the strings LeRobot's preprocessors build before PaliGemma's tokenizer, and the
// tokenizer call both make.
#include "lerobot/policies/pi_prompt.h"

#include <torch/torch.h>

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/vlm/unicode_classes.h"
#include "lerobot/policies/vlm/utf8.h"

namespace lerobot {
namespace {

// Python's str.isspace(): the White_Space property plus U+001C..U+001F (bidi classes B and S).
bool python_isspace(char32_t c) { return unicode::is_whitespace(c) || (c >= 0x1C && c <= 0x1F); }

void replace_all(std::string& s, char from, char to) {
  for (char& c : s)
    if (c == from) c = to;
}

}  // namespace

std::string pi0_prompt(const std::string& task) {
  if (!task.empty() && task.back() == '\n') return task;
  return task + "\n";
}

std::string pi05_clean_task(const std::string& utf8_task) {
  const std::u32string text = decode_utf8(utf8_task, "a task given to π0.5's prompt");
  size_t begin = 0, end = text.size();
  while (begin < end && python_isspace(text[begin])) ++begin;
  while (end > begin && python_isspace(text[end - 1])) --end;
  // "_" and "\n" are single bytes that never occur inside a multi-byte UTF-8 sequence.
  std::string out = encode_utf8(text.substr(begin, end - begin));
  replace_all(out, '_', ' ');
  replace_all(out, '\n', ' ');
  return out;
}

int64_t pi05_state_bin(double x) {
  // searchsorted(edges, x, side="right") - 1 over the 256 left edges -1 + k/128 (each exact in
  // binary), counted exactly instead of computing floor((x + 1) * 128), which rounds for values
  // just below an edge.
  if (std::isnan(x)) return 255;
  int64_t lo = 0, hi = 256;  // edges [0, lo) are <= x, edges [hi, 256) are > x
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (-1.0 + static_cast<double>(mid) / 128.0 <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

at::Tensor pi05_discretize_state(const at::Tensor& state) {
  if (!state.defined() || (state.dim() != 2 && state.dim() != 3))
    throw_usage("π0.5's prompt needs the normalized state as (B, D) or (B, T, D)",
                state.defined() ? "a state of " + std::to_string(state.dim()) + " dimensions" : "no state",
                "pass observation.state after the normalizer, with its batch dimension");
  if (!state.is_floating_point())
    throw_usage("π0.5's prompt needs a floating-point state (normalized to [-1, 1])");
  // Every float dtype converts to double exactly, so the bins see the values numpy compares.
  at::Tensor last =
      (state.dim() == 3 ? state.select(1, -1) : state).to(torch::kCPU, torch::kDouble).contiguous();
  at::Tensor bins = torch::empty(last.sizes(), torch::kLong);
  const double* in = last.data_ptr<double>();
  int64_t* out = bins.data_ptr<int64_t>();
  for (int64_t i = 0; i < last.numel(); ++i) out[i] = pi05_state_bin(in[i]);
  return bins;
}

std::vector<std::string> pi05_prompts(const std::vector<std::string>& tasks, const at::Tensor& state,
                                      bool include_state) {
  at::Tensor bins;
  if (include_state) {
    bins = pi05_discretize_state(state);
    if (bins.size(0) != static_cast<int64_t>(tasks.size()))
      throw_usage("π0.5's prompt got " + std::to_string(tasks.size()) + " tasks for a state batch of " +
                  std::to_string(bins.size(0)));
  }
  std::vector<std::string> prompts;
  prompts.reserve(tasks.size());
  for (size_t b = 0; b < tasks.size(); ++b) {
    std::string prompt = "Task: " + pi05_clean_task(tasks[b]);
    if (include_state) {
      prompt += ", State: ";
      const int64_t* row = bins[static_cast<int64_t>(b)].data_ptr<int64_t>();
      for (int64_t d = 0; d < bins.size(1); ++d) {
        if (d > 0) prompt += ' ';
        prompt += std::to_string(row[d]);
      }
    }
    prompts.push_back(prompt + ";\nAction: ");
  }
  return prompts;
}

std::vector<std::string> pi0_prompts(const std::vector<std::string>& tasks) {
  std::vector<std::string> prompts;
  prompts.reserve(tasks.size());
  for (const std::string& task : tasks) prompts.push_back(pi0_prompt(task));
  return prompts;
}

TextTokenizer::Encoded pi_tokenize_prompts(const TextTokenizer& tokenizer,
                                           const std::vector<std::string>& prompts, int64_t max_length) {
  return tokenizer.encode_batch(prompts, max_length, /*longest=*/false, /*pad_right=*/true,
                                /*truncation=*/true);
}

}  // namespace lerobot
