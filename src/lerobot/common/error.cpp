// Formats lerobot::Error messages as "where: what (fix)".
#include "lerobot/common/error.h"

namespace lerobot {
namespace {
std::string compose(const std::string& what, const std::string& where, const std::string& fix) {
  std::string s;
  if (!where.empty()) s += where + ": ";
  s += what;
  if (!fix.empty()) s += "\n  fix: " + fix;
  return s;
}
}  // namespace

Error::Error(ErrorKind kind, std::string what, std::string where, std::string fix)
    : std::runtime_error(compose(what, where, fix)),
      kind_(kind),
      problem_(std::move(what)),
      where_(std::move(where)),
      fix_(std::move(fix)) {}

void throw_usage(std::string what, std::string where, std::string fix) {
  throw Error(ErrorKind::kUsage, std::move(what), std::move(where), std::move(fix));
}
void throw_data(std::string what, std::string where, std::string fix) {
  throw Error(ErrorKind::kData, std::move(what), std::move(where), std::move(fix));
}
void throw_checkpoint(std::string what, std::string where, std::string fix) {
  throw Error(ErrorKind::kCheckpoint, std::move(what), std::move(where), std::move(fix));
}
void throw_runtime(std::string what, std::string where, std::string fix) {
  throw Error(ErrorKind::kRuntime, std::move(what), std::move(where), std::move(fix));
}

}  // namespace lerobot
