// Where a policy finds a model it builds on by name (SmolVLA's `vlm_model_name`: a Hub model id
// or a local folder). policies/ only takes local folders; train/, eval/ and apps/ install a
// resolver that maps a Hub id to its snapshot in the Hugging Face cache (downloading it once).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace lerobot {

// (name, the files needed from it, the config field naming it) -> a local folder holding them.
using ModelFolderResolver =
    std::function<std::filesystem::path(const std::string& name, const std::vector<std::string>& files, const std::string& flag)>;

void set_model_folder_resolver(ModelFolderResolver resolver);

// An existing folder is used as it is; anything else goes to the installed resolver, and without
// one is a usage error naming `flag`.
std::filesystem::path resolve_model_folder(const std::string& name, const std::vector<std::string>& files,
                                           const std::string& flag);

}  // namespace lerobot
