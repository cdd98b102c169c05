#include "plugin/loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>

#include "ir/errors.h"

namespace cjax::plugin {

const LoadedPlugin& load_plugin(const std::string& path) {
  static std::map<std::string, LoadedPlugin> loaded;
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;

  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("plugin '{}' does not exist", path));
  // A bare file name would make dlopen search the library path; the user means this file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = dlerror();
    std::string hint = why.find("undefined symbol") != std::string::npos
                           ? " (was it built against another cjax version?)"
                           : "";
    throw Error(fmt::format("cannot load plugin '{}': {}{}", path, why, hint));
  }
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, kAbiSymbol));
  auto functions = reinterpret_cast<FunctionsFn>(dlsym(handle, kFunctionsSymbol));
  if (!abi || !functions)
    throw Error(
        fmt::format("'{}' is not a cjax plugin: it has no {} symbol (register functions with "
                    "CJAX_REGISTER_FUNCTION from <cjax/cjax.h>)",
                    path, abi ? kFunctionsSymbol : kAbiSymbol));
  std::string theirs = abi();
  if (theirs != CJAX_PLUGIN_ABI)
    throw Error(fmt::format("plugin '{}' was built against {}, but this is {}: rebuild it", path,
                            theirs, CJAX_PLUGIN_ABI));
  return loaded.emplace(path, LoadedPlugin{path, functions()}).first->second;
}

const Function& find_function(const LoadedPlugin& plugin, std::string_view name) {
  for (const Function& f : *plugin.functions)
    if (f.name == name) return f;
  std::vector<std::string> names;
  for (const Function& f : *plugin.functions) names.push_back(f.name);
  throw UsageError(
      fmt::format("plugin '{}' has no function '{}'; it registers: {}", plugin.path, name,
                  names.empty() ? "nothing" : fmt::format("{}", fmt::join(names, ", "))));
}

}  // namespace cjax::plugin
