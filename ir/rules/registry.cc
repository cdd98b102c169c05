#include "ir/rules/registry.h"

#include <fmt/format.h>

#include <mutex>

#include "ir/errors.h"
#include "ir/limits.h"
#include "ir/rules/table.h"

namespace cjax {

Primitive& PrimitiveTable::add(Primitive prim) {
  if (by_name_.count(prim.name))
    throw Error(fmt::format("primitive '{}' registered twice", prim.name));
  if (!prim.print_params) prim.print_params = sorted_params;
  if (!prim.canonicalize_params) prim.canonicalize_params = [](Params&) {};
  auto owned = std::make_unique<Primitive>(std::move(prim));
  Primitive& ref = *owned;
  ref.index = static_cast<unsigned>(by_name_.size());
  by_name_.emplace(ref.name, std::move(owned));
  return ref;
}

const Primitive* PrimitiveTable::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

std::vector<std::string_view> PrimitiveTable::names() const {
  std::vector<std::string_view> out;
  out.reserve(by_name_.size());
  for (const auto& [name, prim] : by_name_) out.push_back(name);
  return out;
}

namespace {

const PrimitiveTable& table() {
  // Built on first use; C++ guarantees a thread-safe one-time initialisation.
  static const PrimitiveTable t = [] {
    PrimitiveTable t;
    register_elementwise(t);
    register_structural(t);
    register_slicing(t);
    register_gather_scatter(t);
    register_reductions(t);
    register_dot(t);
    register_calls(t);
    register_control_flow(t);
    register_collectives(t);
    register_random(t);
    return t;
  }();
  return t;
}

// Names of retired primitives whose eqns are read as a current one: older JAX printed a jitted
// call as `pjit` (0.4.x .. 0.6.x) or `xla_call` (before 0.4); jit's canonicalizer maps the params.
std::string_view current_name(std::string_view name) {
  if (name == "pjit" || name == "xla_call") return "jit";
  return name;
}

// Call primitives of older JAX that cjax reads but has no rules for: the interpreter and the CPU
// back end still run their bodies (Primitive::call_body).
std::string_view retired_call_body(std::string_view name) {
  if (name == "closed_call" || name == "core_call") return "call_jaxpr";
  if (name == "remat" || name == "checkpoint") return "jaxpr";
  if (name == "custom_vjp_call_jaxpr") return "fun_jaxpr";
  return {};
}

// Fills the dtype text of an opaque-dtype output (e.g. `key<fry>`) from the first opaque input,
// so structural ops on extended dtypes keep printing their type.
void carry_opaque_dtype_text(std::span<const ShapedArray> in, std::vector<ShapedArray>& out) {
  const ShapedArray* src = nullptr;
  for (const auto& a : in)
    if (a.dtype == DType::opaque && a.annotations && !a.annotations->dtype_text.empty()) {
      src = &a;
      break;
    }
  if (!src) return;
  for (auto& o : out) {
    if (o.dtype != DType::opaque || (o.annotations && !o.annotations->dtype_text.empty())) continue;
    auto ann = std::make_shared<AvalAnnotations>();
    ann->dtype_text = src->annotations->dtype_text;
    o.annotations = std::move(ann);
  }
}

}  // namespace

const Primitive* find_primitive(std::string_view name) {
  return table().find(current_name(name));
}

const Primitive& get_primitive(std::string_view name) {
  const Primitive* p = find_primitive(name);
  if (!p) throw UnsupportedError(fmt::format("unknown primitive '{}'", name));
  return *p;
}

const Primitive& opaque_primitive(std::string_view name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Primitive>, std::less<>> interned;
  std::lock_guard<std::mutex> lock(mu);
  auto it = interned.find(name);
  if (it != interned.end()) return *it->second;
  auto prim = std::make_unique<Primitive>();
  prim->name = std::string(name);
  prim->opaque = true;
  prim->call_body = std::string(retired_call_body(name));
  // JAX primitives cjax reads from text without knowing them, whose cost is known: they move data.
  if (name == "copy_p") prim->flop_count = FlopCount::none;
  // Params of an unknown primitive are kept verbatim and print in the order they were read.
  prim->print_params = [](const Params& params) {
    std::vector<ParamRef> out;
    for (const auto& [k, v] : params) out.push_back({k, &v});
    return out;
  };
  prim->canonicalize_params = [](Params&) {};
  const Primitive& ref = *prim;
  interned.emplace(std::string(name), std::move(prim));
  return ref;
}

std::vector<std::string_view> builtin_primitive_names() {
  return table().names();
}

size_t builtin_primitive_count() {
  return table().size();
}

std::vector<ShapedArray> infer_avals(const Primitive& prim, std::span<const ShapedArray> in,
                                     const Params& params) {
  if (prim.opaque || !prim.shape_rule)
    throw UnsupportedError(fmt::format("{}: no shape rule for an opaque primitive", prim.name));
  std::vector<ShapedArray> out;
  try {
    out = prim.shape_rule(in, params);
  } catch (const TypeError&) {
    throw;
  } catch (const UnsupportedError&) {
    throw;
  } catch (const Error& e) {
    // A malformed param read through the generic Params accessors.
    throw TypeError(fmt::format("{}: {}", prim.name, e.what()));
  }
  // Tracing and the readers meet every array a program makes here: a rule's result (from params
  // such as broadcast_in_dim's shape) stays within the limits the readers apply to avals.
  for (const ShapedArray& a : out)
    if (std::string why = shape_limit_error(a.dtype, a.shape); !why.empty())
      throw TypeError(fmt::format("{}: {}", prim.name, why));
  carry_opaque_dtype_text(in, out);
  return out;
}

}  // namespace cjax
