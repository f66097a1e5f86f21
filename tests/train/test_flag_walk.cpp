// The flag walk: every flag `lerobot-cpp train --help` lists must be read by some code of the run
// (src/ and apps/), or be listed in accepted_unused_train_flags() with its reason. "Read" is
// decided on the source: the field's name used as a member (`.name` / `->name`) anywhere, or by
// its bare name in the config's own files, outside field() declarations, member declarations,
// plain assignments, validate() bodies, comments and string literals. A new flag that nothing
// reads fails here until it is used, refused or listed. The listed flags are reported once in the
// run's log (Trainer test below).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "lerobot/train/unused_flags.h"
#include "train_test_helpers.h"

using namespace lerobot;
using namespace lerobot::testing;

namespace {

struct Line {
  fs::path file;
  int number = 0;
  std::string code;  // comments and string literals removed
};

std::string strip(const std::string& raw, bool& in_block_comment) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (in_block_comment) {
      if (raw.compare(i, 2, "*/") == 0) {
        in_block_comment = false;
        ++i;
      }
      continue;
    }
    if (raw.compare(i, 2, "//") == 0) break;
    if (raw.compare(i, 2, "/*") == 0) {
      in_block_comment = true;
      ++i;
      continue;
    }
    if (raw[i] == '"' || raw[i] == '\'') {
      const char q = raw[i];
      for (++i; i < raw.size() && raw[i] != q; ++i)
        if (raw[i] == '\\') ++i;
      out += "\"\"";
      continue;
    }
    out += raw[i];
  }
  return out;
}

// Every line of src/ and apps/ that may read a config field: not in a validate() body, not a
// field() declaration.
const std::vector<Line>& code_lines() {
  static const std::vector<Line> lines = [] {
    std::vector<Line> out;
    const fs::path root = LEROBOT_SOURCE_DIR;
    for (const char* top : {"src", "apps"}) {
      for (const auto& e : fs::recursive_directory_iterator(root / top)) {
        const auto ext = e.path().extension();
        if (ext != ".cpp" && ext != ".h") continue;
        std::ifstream in(e.path());
        std::string raw;
        bool block = false;
        int number = 0, validate_depth = -1, depth = 0;
        while (std::getline(in, raw)) {
          ++number;
          const std::string code = strip(raw, block);
          const bool opens_validate = code.find("validate() const") != std::string::npos &&
                                      code.find(';') == std::string::npos;
          if (opens_validate && validate_depth < 0) validate_depth = depth;
          for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
          const bool in_validate = validate_depth >= 0;
          if (validate_depth >= 0 && depth <= validate_depth && code.find('}') != std::string::npos) validate_depth = -1;
          if (in_validate || raw.find("field(v, \"") != std::string::npos) continue;
          out.push_back({e.path(), number, code});
        }
      }
    }
    return out;
  }();
  return lines;
}

// Files (stems) that declare `name` with field(v, "name", ...).
std::set<std::string> declaring_stems(const std::string& name) {
  static const std::map<std::string, std::string> texts = [] {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(LEROBOT_SOURCE_DIR) / "src")) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      m[e.path().string()] = ss.str();
    }
    return m;
  }();
  std::set<std::string> stems;
  for (const auto& [path, text] : texts)
    if (text.find("field(v, \"" + name + "\"") != std::string::npos)
      stems.insert((fs::path(path).parent_path() / fs::path(path).stem()).string());
  return stems;
}

// Where `name` is read, or "" when nowhere.
std::string read_at(const std::string& name) {
  const std::regex member("(\\.|->)\\s*" + name + "\\b");
  const std::regex bare("\\b" + name + "\\b");
  // A member or local declaration (`int64_t name = 3;`), but not `return name;`.
  const std::regex decl("^\\s*(const\\s+)?(?!return\\b)[\\w:]+(<.*>)?\\s+" + name + "\\s*(=.*|\\{.*\\})?;\\s*$");
  const std::regex assign("\\b" + name + "\\s*=[^=]");
  const std::set<std::string> own = declaring_stems(name);
  for (const auto& l : code_lines()) {
    if (l.code.find(name) == std::string::npos) continue;
    if (!std::regex_search(l.code, bare) || std::regex_match(l.code, decl)) continue;
    // Drop plain assignments (a write, e.g. a constructor's default), then look again.
    const std::string rest = std::regex_replace(l.code, assign, "=");
    const std::string where = l.file.string() + ":" + std::to_string(l.number);
    if (std::regex_search(rest, member)) return where;
    if (own.count((l.file.parent_path() / l.file.stem()).string()) && std::regex_search(rest, bare)) return where;
  }
  return "";
}

std::vector<std::string> help_flags() {
  std::string out;
  EXPECT_EQ(run_cli("train --help", &out), 0) << out;
  std::vector<std::string> keys;
  std::istringstream in(out);
  std::string line;
  const std::regex flag("^  --([A-Za-z0-9_.]+)=");
  std::set<std::string> seen;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, flag) && seen.insert(m[1]).second) keys.push_back(m[1]);
  }
  return keys;
}

}  // namespace

TEST(FlagWalk, ScannerSeesReadsAndMisses) {
  // Read through a member: batch_size (cfg.batch_size), eval_split (cfg.dataset.eval_split).
  EXPECT_NE(read_at("batch_size"), "");
  EXPECT_NE(read_at("eval_split"), "");
  EXPECT_NE(read_at("max_eval_samples"), "");
  // Declared and validated but not otherwise used: the scanner must call it unread.
  EXPECT_EQ(read_at("persistent_workers"), "") << "persistent_workers is read at " << read_at("persistent_workers");
  EXPECT_EQ(read_at("lerobot_flag_walk_no_such_field"), "");
}

TEST(FlagWalk, EveryTrainFlagIsReadOrListedAsNotUsed) {
  const auto flags = help_flags();
  ASSERT_GT(flags.size(), 100u);  // every choice type's options are listed
  std::map<std::string, std::string> listed;
  for (const auto& u : accepted_unused_train_flags()) {
    EXPECT_TRUE(listed.emplace(u.key, u.reason).second) << "listed twice: " << u.key;
    EXPECT_GT(std::string(u.reason).size(), 10u) << u.key << " needs a reason";
  }
  const std::set<std::string> help(flags.begin(), flags.end());
  for (const auto& [key, reason] : listed) EXPECT_TRUE(help.count(key)) << "listed as not used but not a flag: " << key;
  int unread = 0;
  for (const auto& key : flags) {
    if (key == "config_path" || (key.size() > 5 && key.compare(key.size() - 5, 5, ".type") == 0)) continue;
    std::string name = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    if (name == "private") name = "private_";  // a C++ keyword: the member carries a trailing '_'
    if (listed.count(key)) continue;
    const std::string at = read_at(name);
    if (at.empty()) {
      ++unread;
      ADD_FAILURE() << "--" << key << " is parsed but nothing reads '" << name
                    << "': use it, refuse it, or list it in accepted_unused_train_flags() with a reason";
    }
  }
  EXPECT_EQ(unread, 0);
}

TEST(FlagWalk, NotUsedFlagsAreReportedOnceInTheLog) {
  const fs::path out = train_scratch() / "flag_walk_run";
  std::string log;
  const int rc = run_cli("train" + join_args(tiny_act_run(out, 1, {"--persistent_workers=false", "--dataset.video_backend=pyav"})), &log);
  ASSERT_EQ(rc, 0) << log;
  const std::string needle = "accepted, not used";
  const size_t first = log.find(needle);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(needle, first + 1), std::string::npos) << "reported more than once:\n" << log;
  const std::string line = log.substr(first, log.find('\n', first) - first);
  EXPECT_NE(line.find("--persistent_workers"), std::string::npos) << line;
  EXPECT_NE(line.find("--dataset.video_backend"), std::string::npos) << line;
  EXPECT_EQ(line.find("--batch_size"), std::string::npos) << line;  // read: not reported
}
