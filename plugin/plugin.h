// Writing a cjax plugin: a shared library of C++ functions the `cjax` CLI can trace, differentiate
// and report on (`cjax residuals --plugin ./libmymodel.so --function loss`).
//
//   #include <cjax/cjax.h>
//   namespace np = cjax::numpy;
//   cjax::Array loss(const cjax::Array& W, const cjax::Array& x) {
//     return np::sum(np::sin(np::dot(W, x)));
//   }
//   CJAX_REGISTER_FUNCTION("loss", loss, "f32[4,4], f32[4]", "W, x");
//
// Build it as a MODULE library linking cjax::plugin (headers only: its cjax symbols resolve to
// the loading `cjax` executable). The function takes Arrays and returns an Array or a pytree of
// Arrays; the specs give one aval per argument, the names label them in reports.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/array.h"
#include "cjax/make_jaxpr.h"
#include "cjax/pytree.h"
#include "ir/errors.h"
#include "plugin/plugin_abi.h"

namespace cjax::plugin::detail {

// The plugin's own list. Hidden: each shared object keeps its own, never the executable's.
[[gnu::visibility("hidden")]] inline std::vector<Function>& registered_functions() {
  static std::vector<Function> functions;
  return functions;
}

template <class R, class... A, size_t... I>
Jaxpr trace_on_specs(const std::function<R(A...)>& f, const std::vector<ShapedArray>& avals,
                     const std::vector<std::string>& names, const std::string& fname,
                     std::index_sequence<I...>) {
  return make_jaxpr(f, names, fname)(ShapeDtype{avals[I].dtype, avals[I].shape}...);
}

template <class R, class... A>
Function make_function(std::string name, std::function<R(A...)> f, std::string_view specs,
                       std::string_view arg_names, std::string description) {
  Function out{
      std::move(name), std::move(description), split_list(specs), split_list(arg_names), {}};
  out.make_jaxpr = [f = std::move(f), specs = out.arg_specs, names = out.arg_names,
                    fname = out.name]() {
    if (specs.size() != sizeof...(A))
      throw Error(fmt::format("function '{}' takes {} arguments but registers {} specs", fname,
                              sizeof...(A), specs.size()));
    if (!names.empty() && names.size() != specs.size())
      throw Error(fmt::format("function '{}' registers {} argument names for {} specs", fname,
                              names.size(), specs.size()));
    std::vector<ShapedArray> avals;
    for (const std::string& s : specs) avals.push_back(parse_arg_spec(s));
    return trace_on_specs(f, avals, names, fname, std::index_sequence_for<A...>{});
  };
  return out;
}

// An example argument as a pytree: a ShapeDtype becomes an Array holding no data.
template <class T>
auto example_tree(const T& a) {
  if constexpr (std::is_same_v<T, ShapeDtype>)
    return Array(a);
  else
    return a;
}

// A function of pytrees (structs registered with CJAX_PYTREE, vectors, maps, Arrays), traced on
// the example arguments `make_args` returns as a std::tuple, one element per argument. The specs
// and names are the flattened leaves': `params.layers.W1` for argument `params`'s leaf at
// `.layers.W1`, as make_jaxpr names them.
template <class F, class MakeArgs>
Function make_tree_function(std::string name, F f, MakeArgs make_args, std::string_view arg_names,
                            std::string description) {
  Function out{std::move(name), std::move(description), {}, {}, {}};
  const std::vector<std::string> top = split_list(arg_names);
  // Errors wait for the trace: a throw here would end the program loading the plugin.
  std::string error;
  auto args = std::make_shared<std::optional<decltype(make_args())>>();
  try {
    args->emplace(make_args());
    constexpr size_t arity = std::tuple_size_v<decltype(make_args())>;
    if (!top.empty() && top.size() != arity)
      throw Error(fmt::format("function '{}' registers {} argument names for {} example arguments",
                              out.name, top.size(), arity));
    size_t i = 0;
    auto add = [&](const auto& arg) {
      const FlatTree flat = tree_flatten(example_tree(arg));
      const std::string base = top.empty() ? fmt::format("args[{}]", i) : top[i];
      for (size_t k = 0; k < flat.leaves.size(); ++k) {
        out.arg_specs.push_back(flat.leaves[k].aval().str_short());
        out.arg_names.push_back(base + keystr(flat.paths[k]));
      }
      ++i;
    };
    std::apply([&](const auto&... a) { (add(a), ...); }, **args);
  } catch (const std::exception& e) {
    error = fmt::format("function '{}': its example arguments: {}", out.name, e.what());
    out.arg_specs.clear();
    out.arg_names.clear();
  }
  out.make_jaxpr = [f = std::move(f), args, top, error, fname = out.name]() {
    if (!error.empty()) throw Error(error);
    return std::apply(
        [&](const auto&... a) { return cjax::make_jaxpr(f, top, fname)(example_tree(a)...); },
        **args);
  };
  return out;
}

struct TreeRegistrar {
  template <class F, class MakeArgs>
  TreeRegistrar(const char* name, F&& fn, MakeArgs&& make_args, const char* arg_names,
                const char* description) {
    registered_functions().push_back(make_tree_function(
        name, std::forward<F>(fn), std::forward<MakeArgs>(make_args), arg_names, description));
  }
};

struct Registrar {
  template <class F>
  Registrar(const char* name, F&& fn, const char* specs, const char* arg_names,
            const char* description) {
    registered_functions().push_back(
        make_function(name, std::function{std::forward<F>(fn)}, specs, arg_names, description));
  }
};

}  // namespace cjax::plugin::detail

// The two symbols the CLI looks up (plugin_abi.h); inline, so any number of the plugin's files
// may include this header.
extern "C" {
[[gnu::used, gnu::visibility("default")]] inline const char* cjax_plugin_abi() {
  return CJAX_PLUGIN_ABI;
}
[[gnu::used, gnu::visibility("default")]] inline const std::vector<cjax::plugin::Function>*
cjax_plugin_functions() {
  return &cjax::plugin::detail::registered_functions();
}
}

#define CJAX_PLUGIN_CONCAT2(a, b) a##b
#define CJAX_PLUGIN_CONCAT(a, b) CJAX_PLUGIN_CONCAT2(a, b)

// Registers `fn`, a function of pytrees, under NAME: its arguments named ARG_NAMES
// ("params, tokens"), traced on the example arguments the last macro argument returns as a
// std::tuple (a function or lambda; Arrays made from ShapeDtype hold no data). The CLI sees one
// argument per leaf, `params.layers.W1`:
//   CJAX_REGISTER_TREE_FUNCTION("loss", loss, "params, tokens", [] {
//     return std::tuple{example_params(), cjax::ShapeDtype{cjax::DType::i32, {4, 16}}};
//   });
#define CJAX_REGISTER_TREE_FUNCTION(NAME, fn, ARG_NAMES, ...) \
  CJAX_REGISTER_TREE_FUNCTION_DESCRIBED(NAME, fn, ARG_NAMES, "", __VA_ARGS__)
#define CJAX_REGISTER_TREE_FUNCTION_DESCRIBED(NAME, fn, ARG_NAMES, DESCRIPTION, ...)            \
  static const ::cjax::plugin::detail::TreeRegistrar CJAX_PLUGIN_CONCAT(cjax_plugin_registrar_, \
                                                                        __COUNTER__) {          \
    NAME, fn, (__VA_ARGS__), ARG_NAMES, DESCRIPTION                                             \
  }

// Registers `fn` under NAME with its argument specs ("f32[4,4], f32[4]") and names ("W, x").
#define CJAX_REGISTER_FUNCTION(NAME, fn, SPECS, ARG_NAMES) \
  CJAX_REGISTER_FUNCTION_DESCRIBED(NAME, fn, SPECS, ARG_NAMES, "")
// The same with a one-line description for `cjax examples --plugin`.
#define CJAX_REGISTER_FUNCTION_DESCRIBED(NAME, fn, SPECS, ARG_NAMES, DESCRIPTION)           \
  static const ::cjax::plugin::detail::Registrar CJAX_PLUGIN_CONCAT(cjax_plugin_registrar_, \
                                                                    __COUNTER__) {          \
    NAME, fn, SPECS, ARG_NAMES, DESCRIPTION                                                 \
  }
