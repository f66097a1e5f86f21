// π0/π0.5 prompts against LeRobot 0.6.2 itself: the strings its Pi05PrepareStateTokenizerProcessorStep
// and Pi0NewLineProcessor built (scripts/python_lerobot/pi_prompt_cases.py, run on LeRobot in the
// Debian 13 chroot: tests/policies/data/pi_prompt_cases.json), plus hand-derived cases from the
// source (processor_pi05.py lines 73-84, processor_pi0.py lines 71-75) and the refusals.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <limits>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/policies/pi_prompt.h"

namespace lerobot {
namespace {

const std::string kCases = std::string(LEROBOT_SOURCE_DIR) + "/tests/policies/data/pi_prompt_cases.json";

double value_of(const Json& v) {
  if (v.is_number()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

// A float32 tensor from nested JSON lists (the values are float32 already, so exact).
torch::Tensor prompt_tensor_of(const Json& j) {
  std::vector<int64_t> shape;
  for (const Json* p = &j; p->is_array(); p = &(*p)[0]) shape.push_back(static_cast<int64_t>(p->size()));
  std::vector<float> flat;
  std::function<void(const Json&)> walk = [&](const Json& x) {
    if (x.is_array())
      for (const Json& e : x) walk(e);
    else
      flat.push_back(static_cast<float>(value_of(x)));
  };
  walk(j);
  return torch::tensor(flat).reshape(shape);
}

std::vector<std::string> strings(const Json& j) { return j.get<std::vector<std::string>>(); }

TEST(PiPrompt, Pi05PromptsMatchLeRobot) {
  const Json ref = Json::parse(read_file(kCases));
  ASSERT_EQ(ref["pi05"].size(), 4u);
  for (const Json& c : ref["pi05"]) {
    const auto state = prompt_tensor_of(c["state"]);
    const auto got = pi05_prompts(strings(c["tasks"]), state, c["include_state"].get<bool>());
    EXPECT_EQ(got, strings(c["prompts"])) << c["tasks"].dump();
  }
}

TEST(PiPrompt, Pi0PromptsMatchLeRobot) {
  const Json ref = Json::parse(read_file(kCases));
  EXPECT_EQ(pi0_prompts(strings(ref["pi0"]["tasks"])), strings(ref["pi0"]["prompts"]));
}

// processor_pi0.py 71-75: "\n" appended unless the task ends with one; nothing else changes.
TEST(PiPrompt, Pi0AppendsOneNewline) {
  EXPECT_EQ(pi0_prompt("pick up the cube"), "pick up the cube\n");
  EXPECT_EQ(pi0_prompt("pick up the cube\n"), "pick up the cube\n");
  EXPECT_EQ(pi0_prompt(" a_b \n\n"), " a_b \n\n");
  EXPECT_EQ(pi0_prompt(""), "\n");
}

// processor_pi05.py 79: task.strip().replace("_", " ").replace("\n", " ").
TEST(PiPrompt, Pi05CleansTheTaskAsPython) {
  EXPECT_EQ(pi05_clean_task("  pick_up_the\ncube \t\r\n"), "pick up the cube");
  EXPECT_EQ(pi05_clean_task("_x_"), " x ");                        // stripped before "_" becomes a space
  EXPECT_EQ(pi05_clean_task("\xe3\x80\x80task\xc2\xa0"), "task");  // U+3000, U+00A0
  EXPECT_EQ(pi05_clean_task("\x1c\x1d task \x1e\x1f"), "task");    // str.isspace() beyond White_Space
  EXPECT_EQ(pi05_clean_task("zero\xe2\x80\x8bwidth"), "zero\xe2\x80\x8bwidth");  // U+200B is not a space
  EXPECT_EQ(pi05_clean_task("\n"), "");
  EXPECT_THROW(pi05_clean_task("bad \xff"), Error);
}

// processor_pi05.py 75: np.digitize(x, np.linspace(-1, 1, 257)[:-1]) - 1.
TEST(PiPrompt, Pi05StateBinsAreNumpysDigitize) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(pi05_state_bin(-1.0), 0);
  EXPECT_EQ(pi05_state_bin(std::nextafter(-1.0, -2.0)), -1);
  EXPECT_EQ(pi05_state_bin(-1.0 + 1.0 / 128), 1);
  EXPECT_EQ(pi05_state_bin(std::nextafter(-1.0 + 1.0 / 128, -2.0)), 0);
  EXPECT_EQ(pi05_state_bin(0.0), 128);
  EXPECT_EQ(pi05_state_bin(-0.0), 128);
  EXPECT_EQ(pi05_state_bin(-1e-30), 127);  // floor((x + 1) * 128) would say 128
  EXPECT_EQ(pi05_state_bin(1e-30), 128);
  EXPECT_EQ(pi05_state_bin(0.9921875), 255);
  EXPECT_EQ(pi05_state_bin(std::nextafter(0.9921875, 0.0)), 254);
  EXPECT_EQ(pi05_state_bin(1.0), 255);
  EXPECT_EQ(pi05_state_bin(7.0), 255);
  EXPECT_EQ(pi05_state_bin(inf), 255);
  EXPECT_EQ(pi05_state_bin(-inf), -1);
  EXPECT_EQ(pi05_state_bin(std::nan("")), 255);
  for (int k = 0; k < 256; ++k) EXPECT_EQ(pi05_state_bin(-1.0 + (k + 0.5) / 128), k);
}

TEST(PiPrompt, Pi05UsesTheLastStepOfAStateHistory) {
  auto state = torch::zeros({2, 3, 2});
  state.select(1, 2).fill_(0.5);  // the last step
  const auto bins = pi05_discretize_state(state);
  EXPECT_EQ(bins.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(torch::equal(bins, torch::full({2, 2}, 192, torch::kLong)));
  const auto prompts = pi05_prompts({"a_b", " c\n"}, state);
  EXPECT_EQ(prompts, (std::vector<std::string>{"Task: a b, State: 192 192;\nAction: ",
                                               "Task: c, State: 192 192;\nAction: "}));
  EXPECT_EQ(pi05_prompts({"a"}, torch::Tensor(), false), std::vector<std::string>{"Task: a;\nAction: "});
  EXPECT_EQ(pi05_prompts({"a"}, torch::zeros({1, 0})),
            std::vector<std::string>{"Task: a, State: ;\nAction: "});
  // float64 and bfloat16 states are binned on their exact values too.
  EXPECT_EQ(pi05_discretize_state(torch::full({1, 1}, -1e-30, torch::kDouble)).item<int64_t>(), 127);
  EXPECT_EQ(pi05_discretize_state(torch::full({1, 1}, 0.5, torch::kBFloat16)).item<int64_t>(), 192);
}

TEST(PiPrompt, BadStatesAreRefused) {
  EXPECT_THROW(pi05_discretize_state(torch::zeros({4})), Error);
  EXPECT_THROW(pi05_discretize_state(torch::zeros({1, 2, 3, 4})), Error);
  EXPECT_THROW(pi05_discretize_state(torch::zeros({1, 4}, torch::kLong)), Error);
  EXPECT_THROW(pi05_prompts({"a", "b"}, torch::zeros({3, 4})), Error);
  EXPECT_THROW(pi05_prompts({"a"}, torch::Tensor()), Error);
}

}  // namespace
}  // namespace lerobot
