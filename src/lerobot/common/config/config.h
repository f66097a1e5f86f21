// The configuration system, with LeRobot's (draccus) semantics.
//
// A config is a struct deriving from Config whose visit() declares each field once:
//
//   struct DatasetConfig : Config {
//     std::string repo_id;                        // the default is the member initializer
//     std::optional<std::string> root;
//     void visit(FieldVisitor& v) override {
//       field(v, "repo_id", repo_id, "Hub id of the dataset");
//       field(v, "root", root, "Local directory of the dataset");
//     }
//   };
//
// That one declaration gives parsing from flags (--dataset.root=DIR) and from YAML/JSON files, the
// default and help text shown by --help, and the JSON dump (train_config.json). Choice fields
// (--policy.type=act) are ChoicePtr<Base> over a Registry<Base> of named subclasses.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"

namespace lerobot {

class Config;
class ChoiceSlot;

// A type-erased handle on one field, produced by field() while a visitor walks a config.
struct FieldRef {
  std::string name;
  std::string help;
  std::string type_name;                                  // "int", "float", "str", "list[int]", ...
  std::function<Json()> get;                              // current value as JSON
  std::function<void(const Json&, const std::string&)> set_json;     // (value, path for errors)
  std::function<void(const std::string&, const std::string&)> set_text;  // flag text
  Config* nested = nullptr;                               // a sub-config (recurse into it)
  ChoiceSlot* choice = nullptr;                           // a choice field (policy, optimizer, ...)
};

class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  virtual void on(FieldRef&& f) = 0;
};

class Config {
 public:
  virtual ~Config() = default;
  virtual void visit(FieldVisitor& v) = 0;
  // Called after every update of the config; throw a usage error for inconsistent values.
  virtual void validate() const {}
  // Copies state that is not a field (so not in the JSON dump) from `other`, an instance of the
  // same class; ChoicePtr's deep copy calls it after copying the fields.
  virtual void copy_non_fields(const Config& other) {}
};

// Builds the JSON dump, applies JSON or flag text. Definitions in config.cpp.
Json to_json(Config& config);
void apply_json(Config& config, const Json& j, const std::string& path);
// Runs validate() on every sub-config, then on `config` (once all values are set, as draccus'
// __post_init__ sees them).
void validate_tree(Config& config);
// Every field of `config` (not recursing), in declaration order.
std::vector<FieldRef> collect_fields(Config& config);
// The field names of `config`, in declaration order.
std::vector<std::string> field_names(Config& config);
// Applies {"type": ..., other keys...} to a choice slot (null clears it).
void apply_choice_json(ChoiceSlot& slot, const Json& j, const std::string& path);

// ---- choice types ----------------------------------------------------------------------------

// Registry<Base>::add("act", [] { return std::make_unique<ACTConfig>(); }) at static-init time.
template <class Base>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>()>;
  static std::map<std::string, Factory>& entries() {
    static std::map<std::string, Factory> m;
    return m;
  }
  static bool add(const std::string& name, Factory f) {
    entries()[name] = std::move(f);
    return true;
  }
  static std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const auto& kv : entries()) out.push_back(kv.first);
    return out;
  }
  // Choices LeRobot has and lerobot.cpp does not (yet), with what to say: refused by name instead
  // of "unknown choice", so a LeRobot user learns it is missing here, not misspelt.
  static std::map<std::string, std::string>& missing() {
    static std::map<std::string, std::string> m;
    return m;
  }
};

// Type-erased access to a ChoicePtr for the generic machinery.
class ChoiceSlot {
 public:
  virtual ~ChoiceSlot() = default;
  virtual Config* get() = 0;                         // null when unset
  virtual std::string type() const = 0;              // "" when unset
  virtual void set_type(const std::string& type, const std::string& path) = 0;  // keeps it if same
  virtual void reset() = 0;
  virtual std::vector<std::string> choices() const = 0;
  // A fresh default instance of `type`, for --help.
  virtual std::unique_ptr<Config> make(const std::string& type) const = 0;
};

// Choice-type bases derive from ChoiceConfig and report their registered name.
class ChoiceConfig : public Config {
 public:
  virtual std::string type() const = 0;
};

template <class Base>
class ChoicePtr : public ChoiceSlot {
 public:
  ChoicePtr() = default;
  ChoicePtr(const ChoicePtr& other) { *this = other; }
  ChoicePtr& operator=(const ChoicePtr& other) {
    if (this == &other) return *this;
    ptr_.reset();
    if (other.ptr_) {  // deep copy through the JSON dump
      set_type(other.ptr_->type(), "");
      apply_json(*ptr_, to_json(*other.ptr_), "");
      ptr_->copy_non_fields(*other.ptr_);
    }
    return *this;
  }
  Base* operator->() const { return ptr_.get(); }
  Base& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  Base* ptr() const { return ptr_.get(); }
  template <class T>
  T* as() const { return dynamic_cast<T*>(ptr_.get()); }

  Config* get() override { return ptr_.get(); }
  std::string type() const override { return ptr_ ? ptr_->type() : std::string(); }
  void set_type(const std::string& type, const std::string& path) override {
    if (ptr_ && ptr_->type() == type) return;
    auto& entries = Registry<Base>::entries();
    auto it = entries.find(type);
    if (it == entries.end()) {
      std::vector<std::string> names = Registry<Base>::names();
      const auto& missing = Registry<Base>::missing();
      if (auto m = missing.find(type); m != missing.end())
        throw_usage("'" + type + "' is LeRobot's, but lerobot.cpp does not have it: " + m->second, path,
                    "choose one of: " + join_names(names));
      throw_usage("unknown choice '" + type + "' (valid: " + join_names(names) + ")", path,
                  suggestion(type, names));
    }
    ptr_ = it->second();
  }
  void reset() override { ptr_.reset(); }
  std::vector<std::string> choices() const override { return Registry<Base>::names(); }
  std::unique_ptr<Config> make(const std::string& type) const override {
    return Registry<Base>::entries().at(type)();
  }

 private:
  static std::string join_names(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }
  static std::string suggestion(const std::string& word, const std::vector<std::string>& names);
  std::unique_ptr<Base> ptr_;
};

std::string suggest_choice(const std::string& word, const std::vector<std::string>& names);
template <class Base>
std::string ChoicePtr<Base>::suggestion(const std::string& word, const std::vector<std::string>& names) {
  return suggest_choice(word, names);
}

// ---- field() for each value type ---------------------------------------------------------------

// The flag values that leave an optional field unset (draccus's None).
inline bool is_null_flag_value(const std::string& text) {
  return text == "null" || text == "None" || text == "none" || text == "~";
}

namespace detail {
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class T> struct is_map<std::map<std::string, T>> : std::true_type {};

[[noreturn]] void bad_value(const std::string& path, const std::string& expected, const std::string& got);
long long parse_int_text(const std::string& text, const std::string& path);
double parse_float_text(const std::string& text, const std::string& path);
bool parse_bool_text(const std::string& text, const std::string& path);
Json parse_literal(const std::string& text, const std::string& path);

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "int";
  else if constexpr (std::is_floating_point_v<T>) return "float";
  else if constexpr (std::is_same_v<T, std::string>) return "str";
  else if constexpr (is_optional<T>::value) return "Optional[" + type_name<typename T::value_type>() + "]";
  else if constexpr (is_vector<T>::value) return "list[" + type_name<typename T::value_type>() + "]";
  else if constexpr (is_map<T>::value) return "dict[str, " + type_name<typename T::mapped_type>() + "]";
  else if constexpr (std::is_same_v<T, Json>) return "json";
  else return "object";
}

template <class T>
void from_json_checked(const Json& j, T& out, const std::string& path) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) bad_value(path, "true or false", j.dump());
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (j.is_number_integer()) out = j.get<T>();
    else if (j.is_number_float() && j.get<double>() == static_cast<double>(static_cast<long long>(j.get<double>())))
      out = static_cast<T>(j.get<double>());
    else bad_value(path, "an integer", j.dump());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) bad_value(path, "a number", j.dump());
    out = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) bad_value(path, "a string", j.dump());
    out = j.get<std::string>();
  } else if constexpr (is_optional<T>::value) {
    if (j.is_null()) out.reset();
    else {
      typename T::value_type v{};
      if (out) v = *out;
      from_json_checked(j, v, path);
      out = std::move(v);
    }
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) bad_value(path, "a list", j.dump());
    T v;
    for (size_t i = 0; i < j.size(); ++i) {
      typename T::value_type item{};
      from_json_checked(j[i], item, path + "[" + std::to_string(i) + "]");
      v.push_back(std::move(item));
    }
    out = std::move(v);
  } else if constexpr (is_map<T>::value) {
    if (!j.is_object()) bad_value(path, "a dict", j.dump());
    T v;
    for (auto it = j.begin(); it != j.end(); ++it) {
      typename T::mapped_type item{};
      from_json_checked(it.value(), item, path + "." + it.key());
      v.emplace(it.key(), std::move(item));
    }
    out = std::move(v);
  } else if constexpr (std::is_same_v<T, Json>) {
    out = j;
  } else {
    // Types with nlohmann adl to_json/from_json (enums, small structs such as PolicyFeature).
    try {
      out = j.get<T>();
    } catch (const std::exception& e) {
      bad_value(path, "a valid " + type_name<T>(), j.dump() + " (" + e.what() + ")");
    }
  }
}

template <class T>
Json value_to_json(const T& v) {
  if constexpr (is_optional<T>::value) {
    if (!v) return nullptr;
    return value_to_json(*v);
  } else if constexpr (is_vector<T>::value) {
    Json arr = Json::array();
    for (const auto& x : v) arr.push_back(value_to_json(x));
    return arr;
  } else if constexpr (is_map<T>::value) {
    Json obj = Json::object();
    for (const auto& kv : v) obj[kv.first] = value_to_json(kv.second);
    return obj;
  } else {
    return Json(v);
  }
}

template <class T>
void from_text(const std::string& text, T& out, const std::string& path) {
  if constexpr (std::is_same_v<T, bool>) out = parse_bool_text(text, path);
  else if constexpr (std::is_integral_v<T>) out = static_cast<T>(parse_int_text(text, path));
  else if constexpr (std::is_floating_point_v<T>) out = static_cast<T>(parse_float_text(text, path));
  else if constexpr (std::is_same_v<T, std::string>) out = text;
  else if constexpr (is_optional<T>::value) {
    if (is_null_flag_value(text)) out.reset();
    else {
      typename T::value_type v{};
      from_text(text, v, path);
      out = std::move(v);
    }
  } else {
    from_json_checked(parse_literal(text, path), out, path);
  }
}
}  // namespace detail

// Declares a value field (number, bool, string, optional, list, dict, Json, adl-json type).
template <class T>
void field(FieldVisitor& v, const char* name, T& member, const char* help) {
  FieldRef f;
  f.name = name;
  f.help = help;
  if constexpr (std::is_base_of_v<Config, T>) {
    f.type_name = "config";
    f.nested = &member;
    f.get = [&member] { return to_json(member); };
    f.set_json = [&member](const Json& j, const std::string& path) { apply_json(member, j, path); };
    f.set_text = [&member](const std::string& text, const std::string& path) {
      apply_json(member, detail::parse_literal(text, path), path);
    };
  } else if constexpr (std::is_base_of_v<ChoiceSlot, T>) {
    f.type_name = "choice";
    f.choice = &member;
    f.get = [&member]() -> Json { return member.get() ? to_json(*member.get()) : Json(nullptr); };
    f.set_json = [&member](const Json& j, const std::string& path) { apply_choice_json(member, j, path); };
    f.set_text = [&member](const std::string& text, const std::string& path) {
      apply_choice_json(member, detail::parse_literal(text, path), path);
    };
  } else {
    f.type_name = detail::type_name<T>();
    f.get = [&member] { return detail::value_to_json(member); };
    f.set_json = [&member](const Json& j, const std::string& path) { detail::from_json_checked(j, member, path); };
    f.set_text = [&member](const std::string& text, const std::string& path) { detail::from_text(text, member, path); };
  }
  v.on(std::move(f));
}

}  // namespace lerobot
