#include "cjax/numpy_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/trace.h"
#include "ir/rules/registry.h"

namespace cjax::numpy::detail {
namespace {

std::vector<DTypeAndWeak> types_of(std::span<const Array> args) {
  std::vector<DTypeAndWeak> out;
  for (const Array& a : args) out.push_back(dtype_and_weak(a.aval()));
  return out;
}

std::vector<Array> convert_all(std::span<const Array> args, DTypeAndWeak to,
                               const SourceInfo& src) {
  std::vector<Array> out;
  for (const Array& a : args) out.push_back(lax::convert_element_type(a, to.dtype, to.weak, src));
  return out;
}

DTypeAndWeak lattice(std::span<const Array> args, const SourceInfo& src) {
  try {
    return lattice_result_type(types_of(args));
  } catch (const TypeError& e) {
    throw_type_error(src, e.what());
  }
}

std::string shapes_text(std::span<const Shape> shapes) {
  std::string out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += shape_str(shapes[i]);
  }
  return out;
}

}  // namespace

std::vector<Array> promote_dtypes(std::span<const Array> args, const SourceInfo& src) {
  if (args.size() < 2) return {args.begin(), args.end()};
  return convert_all(args, lattice(args, src), src);
}

std::vector<Array> promote_dtypes_inexact(std::span<const Array> args, const SourceInfo& src) {
  DTypeAndWeak to = lattice(args, src);
  to.dtype = to_inexact_dtype(to.dtype);
  return convert_all(args, to, src);
}

std::vector<Array> promote_dtypes_numeric(std::span<const Array> args, const SourceInfo& src) {
  DTypeAndWeak to = lattice(args, src);
  to.dtype = to_numeric_dtype(to.dtype);
  return convert_all(args, to, src);
}

Shape broadcast_shapes(std::string_view op, std::span<const Shape> shapes, const SourceInfo& src) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    size_t lead = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[lead + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      throw_type_error(src, fmt::format("{}: incompatible shapes for broadcasting: {}", op,
                                        shapes_text(shapes)));
    }
  }
  return out;
}

std::vector<Array> promote_shapes(std::string_view op, std::span<const Array> args,
                                  const SourceInfo& src) {
  std::vector<Array> out(args.begin(), args.end());
  if (args.size() < 2) return out;
  std::set<int64_t> nonscalar_ranks;
  bool same_rank = true;
  for (const Array& a : args) {
    same_rank = same_rank && a.ndim() == args[0].ndim();
    if (a.ndim() > 0) nonscalar_ranks.insert(a.ndim());
  }
  if (same_rank || nonscalar_ranks.size() < 2) return out;
  std::vector<Shape> shapes;
  for (const Array& a : args) shapes.push_back(a.shape());
  int64_t rank = static_cast<int64_t>(broadcast_shapes(op, shapes, src).size());
  for (Array& a : out) a = lax::broadcast_to_rank(a, rank, src);
  return out;
}

std::vector<Array> promote_args(std::string_view op, std::span<const Array> args,
                                const SourceInfo& src) {
  std::vector<Array> d = promote_dtypes(args, src);
  return promote_shapes(op, d, src);
}

std::vector<Array> promote_args_inexact(std::string_view op, std::span<const Array> args,
                                        const SourceInfo& src) {
  std::vector<Array> d = promote_dtypes_inexact(args, src);
  return promote_shapes(op, d, src);
}

std::vector<Array> promote_args_numeric(std::string_view op, std::span<const Array> args,
                                        const SourceInfo& src) {
  std::vector<Array> d = promote_dtypes_numeric(args, src);
  return promote_shapes(op, d, src);
}

namespace {

// The bodies call_jitted traced with a static key, by (name, key, avals). Bounded: past
// kMaxCached entries it starts afresh (a later call traces again, and prints unshared).
class JitBodies {
 public:
  static constexpr size_t kMaxCached = 4096;
  JaxprRef find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = bodies_.find(key);
    return it == bodies_.end() ? nullptr : it->second;
  }
  void add(const std::string& key, JaxprRef body) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bodies_.size() >= kMaxCached) bodies_.clear();
    bodies_.emplace(key, std::move(body));
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, JaxprRef> bodies_;
};

JitBodies& jit_bodies() {
  static JitBodies bodies;
  return bodies;
}

}  // namespace

std::vector<Array> call_jitted(std::string_view name,
                               const std::function<std::vector<Array>(std::span<const Array>)>& fn,
                               std::span<const Array> args, const SourceInfo& src,
                               std::string_view static_key) {
  const Primitive* jit = find_primitive("jit");
  if (!is_tracing() || !jit || !jit->shape_rule) return fn(args);
  std::vector<ShapedArray> avals;
  for (const Array& a : args) avals.push_back(a.aval());
  std::string cache_key;
  if (!static_key.empty()) {
    cache_key = fmt::format("{}|{}", name, static_key);
    for (const ShapedArray& a : avals)
      cache_key += fmt::format("|{}{}", a.str_short(), a.weak_type ? "w" : "");
    if (JaxprRef body = jit_bodies().find(cache_key)) {
      Params params{{"name", std::string(name)}, {"jaxpr", body}};
      return cjax::bind(*jit, std::vector<Array>(args.begin(), args.end()), std::move(params), src);
    }
  }
  auto debug = std::make_shared<DebugInfo>();
  debug->function_name = std::string(name);
  ClosedTrace closed = trace_to_jaxpr(fn, avals, debug);
  // As JAX's jit: captured values become leading arguments of the call.
  auto inner = std::make_shared<Jaxpr>(std::move(closed.jaxpr));
  convert_constvars(*inner);
  std::vector<Array> operands = closed.consts;
  operands.insert(operands.end(), args.begin(), args.end());
  // A body with captured values is not shared: another call may capture others.
  if (!cache_key.empty() && closed.consts.empty()) jit_bodies().add(cache_key, inner);
  Params params{{"name", std::string(name)}, {"jaxpr", JaxprRef(inner)}};
  return cjax::bind(*jit, operands, std::move(params), src);
}

std::vector<int64_t> reduction_axes(std::string_view op, const Array& a, const Axis& axis,
                                    const SourceInfo& src) {
  std::vector<int64_t> out;
  if (axis.is_none()) {
    for (int64_t i = 0; i < a.ndim(); ++i) out.push_back(i);
    return out;
  }
  std::set<int64_t> seen;
  for (int64_t ax : axis.axes()) {
    int64_t c = lax::canonicalize_axis(ax, a.ndim(), op, src);
    if (!seen.insert(c).second)
      throw_type_error(src, fmt::format("{}: duplicate value in 'axis': {}", op, ax));
    out.push_back(c);
  }
  return out;
}

}  // namespace cjax::numpy::detail
