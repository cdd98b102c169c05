#include "cjax/jit_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "cjax/array_impl.h"
#include "cjax/eval_jaxpr.h"
#include "ir/axis_env.h"
#include "ir/errors.h"
#include "runtime/threefry.h"

namespace cjax::detail {

std::string trace_cache_key(const std::vector<FlatTree>& flat, const char* arg_types,
                            std::string_view api) {
  // Bytes, not text: this runs on every call. Each part says its length, so that no two
  // signatures write one key: a structure's length, then each leaf's dtype, weak type, rank and
  // dims (the structure fixes the number of leaves).
  std::string key = arg_types;
  key += '\0';            // type names hold none
  key += axis_env_key();  // the named axes bound (vmap's axis_name), count first
  // The threefry scheme compiled code draws random bits with (runtime/threefry.h).
  key += runtime::threefry_partitionable() ? 'p' : 'c';
  for (const FlatTree& t : flat) {
    const auto length = static_cast<uint32_t>(t.structure.size());
    key.append(reinterpret_cast<const char*>(&length), sizeof length);
    key += t.structure;
    for (const Array& leaf : t.leaves) {
      if (!leaf.defined())
        throw Error(fmt::format("{}: an argument holds a null cjax::Array", api));
      const ShapedArray& a = leaf.aval();
      key += static_cast<char>(a.dtype);
      key += a.weak_type ? 'w' : 's';
      key += static_cast<char>(a.shape.size());
      key.append(reinterpret_cast<const char*>(a.shape.data()), a.shape.size() * sizeof(int64_t));
    }
  }
  return key;
}

std::shared_ptr<JitEntry> JitCache::find(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

std::shared_ptr<JitEntry> JitCache::insert(const std::string& key,
                                           std::shared_ptr<JitEntry> entry) {
  std::lock_guard lock(mu_);
  return entries_.emplace(key, std::move(entry)).first->second;
}

size_t JitCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void JitCache::clear() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

namespace {

// Donation's checks, made before anything is consumed: no argument is deleted already, and no
// donated array is passed twice.
void check_donation(std::span<const Array> args, const std::vector<bool>& donated) {
  if (donated.empty()) return;
  for (const Array& a : args)
    if (a.is_concrete()) a.buffer();  // throws for a deleted Array
  for (size_t i = 0; i < donated.size() && i < args.size(); ++i)
    for (size_t j = 0; donated[i] && j < args.size(); ++j)
      if (j != i && args[j].id() == args[i].id())
        throw UsageError(fmt::format(
            "jit: argument leaf {} is donated (donate_argnums) and also passed as leaf {}: a "
            "donated array can be passed once",
            i, j));
}

// After an interpreted call: the donated arguments are deleted, and an output that is one of
// them (returned unchanged) becomes a handle of its own first.
void delete_donated(std::span<const Array> args, const std::vector<bool>& donated,
                    std::vector<Array>& outs) {
  for (size_t i = 0; i < donated.size() && i < args.size(); ++i) {
    if (!donated[i] || !args[i].is_concrete()) continue;
    for (Array& o : outs)
      if (o.id() == args[i].id()) o = Array::from_buffer(o.buffer(), o.weak_type());
    take_donated_buffer(args[i]);
  }
}

std::shared_ptr<const PreparedProgram> prepared(JitEntry& e,
                                                const std::shared_ptr<Backend>& backend) {
  {
    std::lock_guard lock(e.mu);
    if (e.backend == backend && e.program) return e.program;
  }
  std::shared_ptr<const PreparedProgram> program = backend->prepare(e.closed.jaxpr);
  std::lock_guard lock(e.mu);
  e.backend = backend;  // keeps the back end the program belongs to alive
  e.program = program;
  return program;
}

}  // namespace

std::vector<Array> run_jit_entry(JitEntry& e, std::span<const Array> args,
                                 const std::vector<bool>& donated) {
  check_donation(args, donated);
  std::shared_ptr<Backend> backend = current_backend();
  auto concrete = [](const Array& x) { return x.is_concrete(); };
  if (!backend || e.closed.jaxpr.eqns.empty() || !std::all_of(args.begin(), args.end(), concrete) ||
      !std::all_of(e.closed.consts.begin(), e.closed.consts.end(), concrete)) {
    // The interpreter, which also reports abstract values.
    std::vector<Array> outs = eval_jaxpr(e.closed, args);
    delete_donated(args, donated, outs);
    return outs;
  }
  std::shared_ptr<const PreparedProgram> program = prepared(e, backend);
  std::vector<runtime::Buffer> consts, inputs;
  consts.reserve(e.closed.consts.size());
  inputs.reserve(args.size());
  for (const Array& c : e.closed.consts) consts.push_back(c.buffer());
  for (size_t i = 0; i < args.size(); ++i)
    inputs.push_back(i < donated.size() && donated[i] ? take_donated_buffer(args[i])
                                                      : args[i].buffer());
  std::vector<runtime::Buffer> results;
  if (donated.empty()) {
    results = program->run(consts, inputs);
  } else {
    try {
      results = program->run_consuming(consts, inputs);
    } catch (...) {
      // Refused before it started (not enough memory, say): the arrays are the caller's again.
      for (size_t i = 0; i < donated.size() && i < args.size(); ++i)
        if (donated[i] && inputs[i]) restore_donated_buffer(args[i], std::move(inputs[i]));
      throw;
    }
  }
  std::vector<Array> outs;
  outs.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    outs.push_back(
        Array::from_buffer(std::move(results[i]), e.closed.jaxpr.outvars[i].aval().weak_type));
  return outs;
}

void log_trace(std::string_view what, std::span<const ShapedArray> avals) {
  static const bool on = [] {
    const char* v = std::getenv("CJAX_LOG_COMPILES");
    return v && *v && std::string_view(v) != "0";
  }();
  if (!on) return;
  std::string text;
  for (const ShapedArray& a : avals)
    text += (text.empty() ? "" : ", ") + a.str_short() + (a.weak_type ? "weak" : "");
  fmt::print(stderr, "cjax: {} for ({})\n", what, text);
}

void log_trace(std::string_view what, std::span<const Array> leaves) {
  std::vector<ShapedArray> avals;
  for (const Array& x : leaves) avals.push_back(x.aval());
  log_trace(what, avals);
}

}  // namespace cjax::detail
