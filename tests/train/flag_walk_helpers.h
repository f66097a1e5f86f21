// The flag walk's engine (tests/train/test_flag_walk.cpp states the rule): a textual model of the
// C++ sources (structs, their bases and members, field() declarations, function bodies) that
// resolves each `--a.b.c` flag of a --help text to the struct that declares field `c` and its
// member, then looks for a read of that member through that struct. Torch-free, so a test can feed
// it a synthetic source tree.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lerobot::testing::flag_walk {

struct SourceFile {
  std::string path;  // relative to the repository root, e.g. "src/lerobot/train/trainer.cpp"
  std::string text;
};

// Every .h and .cpp under `root`/src and `root`/apps.
std::vector<SourceFile> read_source_tree(const std::string& root);

// The command whose code a file is ("" for library code every command may run): files under
// src/lerobot/train/ are train's, apps/lerobot-cpp/<command>*.cpp the command's.
std::string command_of(const std::string& path);

// A `--key=<type>` line of a config --help text; `choices` maps each choice prefix ("policy") to
// the type whose options the line is listed under ("act").
struct HelpFlag {
  std::string key;
  std::map<std::string, std::string> choices;
};
std::vector<HelpFlag> config_flags_of_help(const std::string& help);
// The `--name` words of a hand-written usage text (infer, dataset info|validate|stats), without
// the placeholder --flag (of "--flag=value") and --help.
std::vector<std::string> named_flags_of_help(const std::string& help);

struct Finding {
  std::string key;      // the flag, without "--"
  std::string owner;    // the struct whose field() declares it (config flags)
  std::string member;   // its member
  std::string read_at;  // "path:line" of a read through the owner; "" when none
  std::string problem;  // "" when the flag resolved; else why it did not
};

class SourceModel {
 public:
  explicit SourceModel(const std::vector<SourceFile>& files);
  ~SourceModel();
  SourceModel(const SourceModel&) = delete;
  SourceModel& operator=(const SourceModel&) = delete;

  // Each config flag of `help` (a print_help() text whose root config is struct `root`), resolved
  // to its owner and searched for a read in the code `command` runs.
  std::vector<Finding> walk_config_flags(const std::string& help, const std::string& root,
                                         const std::string& command) const;
  // Each flag of a hand-written usage text, read by key (flags["name"], flags.count("name"),
  // flag_true(a, "name")) in `command_file`.
  std::vector<Finding> walk_named_flags(const std::string& help, const std::string& command_file) const;

  // The parts, for tests of the walk itself.
  Finding resolve(const HelpFlag& flag, const std::string& root) const;
  std::string read_at(const std::string& owner, const std::string& member, const std::string& command) const;
  bool derives_from(const std::string& type, const std::string& base) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lerobot::testing::flag_walk
