// Flags a subcommand handles itself, before the rest go to the config parser.
#include <set>

#include "commands.h"
#include "lerobot/common/error.h"

namespace lerobot::app {

namespace {

template <class Wanted>
std::map<std::string, std::string> take_flags(Args& args, const Wanted& wanted) {
  std::map<std::string, std::string> taken;
  Args rest;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string key = args[i], value;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    std::string name = key.rfind("--", 0) == 0 ? key.substr(2) : std::string();
    for (auto& c : name) c = c == '-' ? '_' : c;
    if (name.empty() || !wanted(name)) {
      rest.push_back(args[i]);
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= args.size()) throw_usage("flag " + key + " has no value", key);
      value = args[++i];
    }
    taken[name] = value;
  }
  args = rest;
  return taken;
}

}  // namespace

std::map<std::string, std::string> take_named_flags(Args& args, const std::set<std::string>& names) {
  return take_flags(args, [&](const std::string& name) { return names.count(name) > 0; });
}

std::map<std::string, std::string> take_flags_with_prefix(Args& args, const std::string& prefix) {
  return take_flags(args, [&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
}

}  // namespace lerobot::app
