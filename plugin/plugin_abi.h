// What a cjax plugin shares with the `cjax` CLI that loads it: the description of one registered
// function, the two C symbols the CLI looks up, and the ABI tag both sides compare. Plugins use
// plugin.h (the registration macro); the CLI uses loader.h.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cjax/version.h"
#include "ir/jaxpr.h"
#include "ir/shaped_array.h"

#define CJAX_PLUGIN_STR2(x) #x
#define CJAX_PLUGIN_STR(x) CJAX_PLUGIN_STR2(x)
// Plugins exchange C++ objects with the CLI, so both must come from the same cjax version and a
// compatible compiler and standard library. (Defined on the command line only by the tests, to
// build a plugin that claims another version.)
#ifndef CJAX_PLUGIN_ABI
#define CJAX_PLUGIN_ABI                                        \
  "cjax " CJAX_VERSION " (plugin ABI 1, g++ " CJAX_PLUGIN_STR( \
      __GNUC__) ", cxx11 abi " CJAX_PLUGIN_STR(_GLIBCXX_USE_CXX11_ABI) ")"
#endif

namespace cjax::plugin {

// One function a plugin registers: like a built-in example, traced on its argument specs.
struct Function {
  std::string name;                    // what `--function` selects
  std::string description;             // one line for `cjax examples --plugin`
  std::vector<std::string> arg_specs;  // "f32[4,4]", one per argument
  std::vector<std::string> arg_names;  // "W", "x"
  std::function<Jaxpr()> make_jaxpr;   // traces the function on the specs
};

// The symbols a plugin exports (defined by plugin.h).
inline constexpr const char* kAbiSymbol = "cjax_plugin_abi";
inline constexpr const char* kFunctionsSymbol = "cjax_plugin_functions";
using AbiFn = const char* (*)();
using FunctionsFn = const std::vector<Function>* (*)();

// "f32[4,4]" -> ShapedArray(f32, {4, 4}); "f32[]" is a scalar. Throws cjax::Error.
ShapedArray parse_arg_spec(std::string_view spec);
// "a, b ,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> split_list(std::string_view text);
// Text from a plugin fit for a one-line message: control bytes escaped (`\x0a`), at most
// `max_chars` characters kept (then "...").
std::string printable(std::string_view text, size_t max_chars = 200);

}  // namespace cjax::plugin
