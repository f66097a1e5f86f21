// The language prompts LeRobot 0.6.2's π0 and π0.5 preprocessors give PaliGemma's tokenizer, and
// how they tokenize them (processor_pi0.py, processor_pi05.py, processor/tokenizer_processor.py).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/policies/vlm/text_tokenizer.h"

namespace lerobot {

// π0 (Pi0NewLineProcessor): the task with "\n" appended unless it already ends with one.
std::string pi0_prompt(const std::string& task);

// π0.5's cleaning of a task (Pi05PrepareStateTokenizerProcessorStep): Python's str.strip() (every
// code point str.isspace() accepts, at both ends), then "_" -> " ", then "\n" -> " ".
std::string pi05_clean_task(const std::string& utf8_task);

// One normalized state value in 256 bins, as np.digitize(x, np.linspace(-1, 1, 257)[:-1]) - 1:
// bin k holds [-1 + k/128, -1 + (k+1)/128); below -1 gives -1; 1 and above give 255, as NaN does.
int64_t pi05_state_bin(double x);

// The bins of a normalized state (B, D), or of its last step when it is (B, T, D): (B, D) int64.
at::Tensor pi05_discretize_state(const at::Tensor& state);

// π0.5's prompts for a batch: "Task: <cleaned task>, State: <bins joined by spaces>;\nAction: ",
// or "Task: <cleaned task>;\nAction: " without the state (include_state false, LeRobot's
// use_proprioceptive_memory). `state` is the normalized state, (B, D) or (B, T, D), B =
// tasks.size(); unused (may be undefined) when include_state is false.
std::vector<std::string> pi05_prompts(const std::vector<std::string>& tasks, const at::Tensor& state,
                                      bool include_state = true);

// π0's prompts for a batch (pi0_prompt of each task).
std::vector<std::string> pi0_prompts(const std::vector<std::string>& tasks);

// LeRobot's TokenizerProcessorStep as both processors configure it: padding "max_length" (every
// row max_length ids), padding_side "right", truncation on (PaliGemma's "<bos>" stays first).
// max_length is the config's tokenizer_max_length (π0 48, π0.5 200).
TextTokenizer::Encoded pi_tokenize_prompts(const TextTokenizer& tokenizer,
                                           const std::vector<std::string>& prompts, int64_t max_length);

}  // namespace lerobot
