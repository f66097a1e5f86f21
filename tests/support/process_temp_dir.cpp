#include "support/process_temp_dir.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

namespace lerobot::testing {
namespace {

struct ProcessTempDir {
  std::filesystem::path path;
  pid_t owner = ::getpid();

  ProcessTempDir() {
    const char* base = std::getenv("TMPDIR");
    const std::filesystem::path parent = (base != nullptr && *base != '\0') ? base : "/tmp";
    std::string tmpl = (parent / "lerobot_test_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror(
          ("cannot make a temp directory " + tmpl + " (is TMPDIR writable, is the disk full?)").c_str());
      std::abort();
    }
    path = tmpl;
    ::setenv("TMPDIR", tmpl.c_str(), 1);
  }

  ~ProcessTempDir() {
    if (::getpid() != owner) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

ProcessTempDir& instance() {
  static ProcessTempDir dir;
  return dir;
}

// Made during static initialisation, before any test runs.
const bool kMadeBeforeMain = (instance(), true);

}  // namespace

const std::filesystem::path& process_temp_dir() { return instance().path; }

std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = process_temp_dir() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace lerobot::testing
