// Generic config machinery: JSON dump, JSON apply with unknown-key detection, value parsing.
#include "lerobot/common/config/config.h"

#include <cerrno>
#include <cstdlib>

#include "lerobot/common/strings.h"

namespace lerobot {
namespace {

class CollectVisitor : public FieldVisitor {
 public:
  void on(FieldRef&& f) override { fields.push_back(std::move(f)); }
  std::vector<FieldRef> fields;
};


}  // namespace

std::vector<FieldRef> collect_fields(Config& config) {
  CollectVisitor v;
  config.visit(v);
  return std::move(v.fields);
}

namespace {

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace

std::vector<std::string> field_names(Config& config) {
  std::vector<std::string> out;
  for (auto& f : collect_fields(config)) out.push_back(f.name);
  return out;
}

Json to_json(Config& config) {
  Json out = Json::object();
  if (auto* choice = dynamic_cast<ChoiceConfig*>(&config)) out["type"] = choice->type();
  for (auto& f : collect_fields(config)) out[f.name] = f.get();
  return out;
}

void apply_json(Config& config, const Json& j, const std::string& path) {
  if (!j.is_object()) detail::bad_value(path.empty() ? "<root>" : path, "a dict of fields", j.dump());
  auto fields = collect_fields(config);
  const bool is_choice = dynamic_cast<ChoiceConfig*>(&config) != nullptr;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (is_choice && key == "type") continue;  // handled by the choice slot
    FieldRef* target = nullptr;
    for (auto& f : fields)
      if (f.name == key) target = &f;
    if (target == nullptr) {
      std::vector<std::string> names;
      for (auto& f : fields) names.push_back(f.name);
      const std::string near = nearest(key, names);
      throw_usage("unknown config key '" + child_path(path, key) + "'", child_path(path, key),
                  near.empty() ? "valid keys here: " + join(names, ", ")
                               : "did you mean '" + child_path(path, near) + "'?");
    }
    target->set_json(it.value(), child_path(path, key));
  }
}

void validate_tree(Config& config) {
  for (auto& f : collect_fields(config)) {
    if (f.nested) validate_tree(*f.nested);
    if (f.choice && f.choice->get()) validate_tree(*f.choice->get());
  }
  config.validate();
}

void apply_choice_json(ChoiceSlot& slot, const Json& j, const std::string& path) {
  if (j.is_null()) {
    slot.reset();
    return;
  }
  if (!j.is_object()) detail::bad_value(path, "a dict with a \"type\" key, or null", j.dump());
  if (j.contains("type")) {
    if (!j["type"].is_string()) detail::bad_value(path + ".type", "a string", j["type"].dump());
    slot.set_type(j["type"].get<std::string>(), path + ".type");
  }
  if (slot.get() == nullptr)
    throw_usage("'" + path + "' has no type", path,
                "set --" + path + ".type=<" + join(slot.choices(), "|") + "> first");
  apply_json(*slot.get(), j, path);
}

std::string suggest_choice(const std::string& word, const std::vector<std::string>& names) {
  const std::string near = nearest(word, names);
  return near.empty() ? "choose one of: " + join(names, ", ") : "did you mean '" + near + "'?";
}

namespace detail {

void bad_value(const std::string& path, const std::string& expected, const std::string& got) {
  throw_usage("bad value for '" + path + "': expected " + expected + ", got " + got, path,
              "pass --" + path + "=<" + expected + ">");
}

long long parse_int_text(const std::string& text, const std::string& path) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0') {
    // Accept integral floats written as 1e3.
    char* fend = nullptr;
    const double d = std::strtod(text.c_str(), &fend);
    if (!text.empty() && *fend == '\0' && d == static_cast<double>(static_cast<long long>(d)))
      return static_cast<long long>(d);
    bad_value(path, "an integer", "'" + text + "'");
  }
  return v;
}

double parse_float_text(const std::string& text, const std::string& path) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0') bad_value(path, "a number", "'" + text + "'");
  return v;
}

bool parse_bool_text(const std::string& text, const std::string& path) {
  if (text == "true" || text == "True" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "False" || text == "0" || text == "no") return false;
  bad_value(path, "true or false", "'" + text + "'");
}

Json parse_literal(const std::string& text, const std::string& path) {
  return parse_yaml(text, "--" + path);
}

}  // namespace detail
}  // namespace lerobot
