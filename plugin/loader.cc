#include "plugin/loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "ir/errors.h"

namespace cjax::plugin {
namespace {

bool has_space_or_control(std::string_view s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool has_control(std::string_view s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// Calls one of the plugin's C symbols: an exception escaping it is the plugin's fault.
template <class F>
auto call_symbol(const std::string& path, const char* symbol, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw Error(fmt::format("plugin '{}': {}() threw: {}", path, symbol, printable(e.what())));
  } catch (...) {
    throw Error(fmt::format("plugin '{}': {}() threw an exception", path, symbol));
  }
}

// What the CLI relies on in a plugin's functions (it prints their names and descriptions one per
// line, looks them up by name, parses the specs and calls make_jaxpr), checked once at load.
void check_functions(const std::string& path, const std::vector<Function>& functions) {
  std::set<std::string_view> names;
  for (size_t i = 0; i < functions.size(); ++i) {
    const Function& f = functions[i];
    // `what` follows the function's name: " has ...", ": ...".
    auto bad = [&](const std::string& what) {
      return Error(fmt::format("plugin '{}': function '{}'{}", path, printable(f.name), what));
    };
    if (f.name.empty())
      throw Error(fmt::format("plugin '{}': function {} has an empty name", path, i));
    if (has_space_or_control(f.name)) throw bad(" has a name with spaces or control characters");
    if (!names.insert(f.name).second) throw bad(" is registered twice");
    if (has_control(f.description)) throw bad(" has a description that is not one line");
    if (!f.make_jaxpr) throw bad(" has nothing to trace (its make_jaxpr is empty)");
    for (const std::string& spec : f.arg_specs) {
      try {
        (void)parse_arg_spec(spec);
      } catch (const Error& e) {
        throw bad(std::string(": ") + e.what());
      }
    }
    if (!f.arg_names.empty() && f.arg_names.size() != f.arg_specs.size())
      throw bad(fmt::format(" registers {} argument names for {} specs", f.arg_names.size(),
                            f.arg_specs.size()));
    for (const std::string& n : f.arg_names)
      if (n.empty() || has_space_or_control(n))
        throw bad(
            fmt::format(" has an argument name that is empty or has spaces or control "
                        "characters: '{}'",
                        printable(n)));
  }
}

}  // namespace

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
    throw Error(fmt::format("cannot load plugin '{}': {}{}", path, printable(why), hint));
  }
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, kAbiSymbol));
  auto functions = reinterpret_cast<FunctionsFn>(dlsym(handle, kFunctionsSymbol));
  if (!abi || !functions)
    throw Error(
        fmt::format("'{}' is not a cjax plugin: it has no {} symbol (register functions with "
                    "CJAX_REGISTER_FUNCTION from <cjax/cjax.h>)",
                    path, abi ? kFunctionsSymbol : kAbiSymbol));
  const char* theirs = call_symbol(path, kAbiSymbol, abi);
  if (!theirs) throw Error(fmt::format("plugin '{}': {}() returned NULL", path, kAbiSymbol));
  // Only the ABI tag is compared before anything else is read: the rest is C++ objects, which
  // mean nothing across versions.
  if (std::string_view(theirs) != CJAX_PLUGIN_ABI)
    throw Error(fmt::format("plugin '{}' was built against {}, but this is {}: rebuild it", path,
                            printable(theirs), CJAX_PLUGIN_ABI));
  const std::vector<Function>* list = call_symbol(path, kFunctionsSymbol, functions);
  if (!list) throw Error(fmt::format("plugin '{}': {}() returned NULL", path, kFunctionsSymbol));
  check_functions(path, *list);
  return loaded.emplace(path, LoadedPlugin{path, list}).first->second;
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
