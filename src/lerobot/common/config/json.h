// JSON type used by configs (insertion-ordered, so dumps keep declaration order) and YAML input.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace lerobot {

using Json = nlohmann::ordered_json;

// Parses YAML (a superset of JSON) into Json. Plain scalars become null/bool/int/float when they
// look like one, otherwise strings; quoted scalars stay strings. `label` names the source in errors.
Json parse_yaml(const std::string& text, const std::string& label);

// Reads a .json/.yaml/.yml file (by content: JSON is valid YAML) into Json.
Json load_json_or_yaml(const std::filesystem::path& path);

// JSON text with LeRobot's layout: indent 4, non-ASCII kept as UTF-8.
std::string dump_pretty(const Json& j, int indent = 4);

}  // namespace lerobot
