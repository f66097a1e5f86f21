// RelativeActions: see relative_actions.h.
#include "lerobot/policies/relative_actions.h"

#include <algorithm>
#include <cctype>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

std::vector<bool> RelativeActions::mask(int64_t action_dim) const {
  std::vector<bool> m(static_cast<size_t>(std::max<int64_t>(action_dim, 0)), true);
  if (!action_names) return m;
  std::vector<std::string> tokens;
  for (const auto& j : exclude_joints)
    if (!j.empty()) tokens.push_back(lower(j));
  const size_t named = std::min(m.size(), action_names->size());
  for (size_t i = 0; i < named; ++i) {
    const std::string name = lower((*action_names)[i]);
    for (const auto& t : tokens)
      if (name.find(t) != std::string::npos) m[i] = false;  // equal or a substring
  }
  return m;
}

torch::Tensor RelativeActions::state_offset(const torch::Tensor& action, const torch::Tensor& state) const {
  if (!action.defined() || (action.dim() != 2 && action.dim() != 3))
    throw_usage("relative actions take an action (B, A) or (B, T, A), got " +
                    (action.defined() ? c10::str(action.sizes()) : std::string("none")),
                "action");
  const int64_t a = action.size(-1);
  if (!state.defined())
    throw_usage("relative actions need the robot's state: the action is made absolute by adding the "
                "observation.state of the last observation preprocessed, and there was none",
                "observation.state", "preprocess an observation with observation.state before postprocessing its action");
  if (state.dim() != 2 || state.size(-1) < a || (state.size(0) != action.size(0) && state.size(0) != 1))
    throw_usage("relative actions subtract observation.state (B, S) with S >= the action's " + std::to_string(a) +
                    " values from the action " + c10::str(action.sizes()) + ", but the state has shape " +
                    c10::str(state.sizes()),
                "observation.state",
                "give a state with at least the action's dimensions, or set policy.use_relative_actions=false");
  const auto m = mask(a);
  std::vector<float> mf(m.begin(), m.end());
  const torch::Tensor mask_t = torch::tensor(mf, torch::kFloat32).to(action.device(), action.scalar_type());
  torch::Tensor offset = state.to(action.device(), action.scalar_type()).slice(-1, 0, a) * mask_t;  // (B, A)
  return action.dim() == 3 ? offset.unsqueeze(-2) : offset;
}

torch::Tensor RelativeActions::to_relative(const torch::Tensor& action, const torch::Tensor& state) const {
  return action - state_offset(action, state);
}

torch::Tensor RelativeActions::to_absolute(const torch::Tensor& action, const torch::Tensor& state) const {
  return action + state_offset(action, state);
}

}  // namespace lerobot
