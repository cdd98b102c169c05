// Loading cjax plugins (plugin.h) into the CLI: dlopen, the ABI check, and lookup by name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plugin/plugin_abi.h"

namespace cjax::plugin {

struct LoadedPlugin {
  std::string path;
  const std::vector<Function>* functions = nullptr;
};

// Loads (once per path; plugins stay loaded for the process's life, since jaxprs point into
// them) and checks the plugin. Throws UsageError for a missing file and cjax::Error for a file
// that is not a cjax plugin or was built against another cjax (the message names both versions).
const LoadedPlugin& load_plugin(const std::string& path);

// Throws UsageError naming the plugin's functions when `name` is not one of them.
const Function& find_function(const LoadedPlugin& plugin, std::string_view name);

}  // namespace cjax::plugin
