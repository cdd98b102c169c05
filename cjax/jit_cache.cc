#include "cjax/jit_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "cjax/array_impl.h"
#include "cjax/eval_jaxpr.h"
#include "ir/errors.h"

namespace cjax::detail {

std::string trace_cache_key(const std::vector<FlatTree>& flat, const char* arg_types,
                            std::string_view api) {
  std::string key = arg_types;
  for (const FlatTree& t : flat) {
    key += "|" + t.structure + ":";
    for (const Array& leaf : t.leaves) {
      if (!leaf.defined())
        throw Error(fmt::format("{}: an argument holds a null cjax::Array", api));
      key += leaf.aval().str_short() + (leaf.weak_type() ? "w," : ",");
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

// Deletes the donated arguments the interpreter has run on (their values are no longer needed).
void delete_donated(std::span<const Array> args, const std::vector<bool>& donated) {
  for (size_t i = 0; i < donated.size() && i < args.size(); ++i)
    if (donated[i]) take_donated_buffer(args[i]);
}

}  // namespace

std::vector<Array> run_jit_entry(JitEntry& e, std::span<const Array> args,
                                 const std::vector<bool>& donated) {
  std::shared_ptr<Backend> backend = current_backend();
  auto concrete = [](const Array& x) { return x.is_concrete(); };
  if (!backend || e.closed.jaxpr.eqns.empty() || !std::all_of(args.begin(), args.end(), concrete) ||
      !std::all_of(e.closed.consts.begin(), e.closed.consts.end(), concrete)) {
    // The interpreter, which also reports abstract values.
    std::vector<Array> outs = eval_jaxpr(e.closed, args);
    delete_donated(args, donated);
    return outs;
  }
  std::shared_ptr<const PreparedProgram> program;
  {
    std::lock_guard lock(e.mu);
    if (e.backend == backend) program = e.program;
  }
  if (!program) {
    program = backend->prepare(e.closed.jaxpr);
    std::lock_guard lock(e.mu);
    e.backend = backend;  // keeps the back end the program belongs to alive
    e.program = program;
  }
  std::vector<runtime::Buffer> consts, inputs;
  consts.reserve(e.closed.consts.size());
  inputs.reserve(args.size());
  for (const Array& c : e.closed.consts) consts.push_back(c.buffer());
  for (const Array& a : args) a.buffer();  // a deleted argument fails before any is taken
  for (size_t i = 0; i < donated.size() && i < args.size(); ++i)
    for (size_t j = 0; donated[i] && j < args.size(); ++j)
      if (j != i && args[j].id() == args[i].id())
        throw UsageError(fmt::format(
            "jit: argument leaf {} is donated (donate_argnums) and also passed as leaf {}: a "
            "donated array can be passed once",
            i, j));
  for (size_t i = 0; i < args.size(); ++i)
    inputs.push_back(i < donated.size() && donated[i] ? take_donated_buffer(args[i])
                                                      : args[i].buffer());
  std::vector<runtime::Buffer> results = donated.empty()
                                             ? program->run(consts, inputs)
                                             : program->run_consuming(consts, std::move(inputs));
  std::vector<Array> outs;
  outs.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    outs.push_back(
        Array::from_buffer(std::move(results[i]), e.closed.jaxpr.outvars[i].aval().weak_type));
  return outs;
}

void log_trace(std::string_view what, std::span<const Array> leaves) {
  static const bool on = [] {
    const char* v = std::getenv("CJAX_LOG_COMPILES");
    return v && *v && std::string_view(v) != "0";
  }();
  if (!on) return;
  std::string avals;
  for (const Array& x : leaves)
    avals += (avals.empty() ? "" : ", ") + x.aval().str_short() + (x.weak_type() ? "weak" : "");
  fmt::print(stderr, "cjax: {} for ({})\n", what, avals);
}

}  // namespace cjax::detail
