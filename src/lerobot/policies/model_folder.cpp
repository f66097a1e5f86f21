// Model folder resolution (see model_folder.h).
#include "lerobot/policies/model_folder.h"

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

ModelFolderResolver& resolver() {
  static ModelFolderResolver r;
  return r;
}

}  // namespace

void set_model_folder_resolver(ModelFolderResolver r) { resolver() = std::move(r); }

std::filesystem::path resolve_model_folder(const std::string& name, const std::vector<std::string>& files,
                                           const std::string& flag) {
  if (std::filesystem::is_directory(name)) return name;
  if (resolver()) return resolver()(name, files, flag);
  throw_usage("'" + name + "' is not a folder here, and nothing here fetches models from the Hub", "--" + flag,
              "pass a local folder with the model's files (" + (files.empty() ? std::string("config.json") : files[0]) +
                  ", ...)");
}

}  // namespace lerobot
