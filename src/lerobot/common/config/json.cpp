// YAML -> JSON conversion (yaml-cpp) and JSON file helpers.
#include "lerobot/common/config/json.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"

namespace lerobot {
namespace {

Json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL" || s == "None") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') return v;
  }
  {
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (errno == 0 && end && *end == '\0' && s.find_first_of("0123456789") != std::string::npos) return v;
    if (s == ".inf" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return s;
}

Json node_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(node_to_json(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = node_to_json(kv.second);
      return obj;
    }
  }
  return nullptr;
}

}  // namespace

Json parse_yaml(const std::string& text, const std::string& label) {
  try {
    return node_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw_usage(std::string("cannot parse as YAML/JSON: ") + e.what(), label,
                "check the quoting of lists and dicts, e.g. '[0,1,2]' or '{\"a\": 1}'");
  }
}

Json load_json_or_yaml(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  if (path.extension() == ".json") {
    try {
      return Json::parse(text);
    } catch (const std::exception& e) {
      throw_usage(std::string("invalid JSON: ") + e.what(), path.string(), "fix the file's syntax");
    }
  }
  return parse_yaml(text, path.string());
}

std::string dump_pretty(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace lerobot
