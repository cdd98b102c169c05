// jit's trace cache (cjax/jit.h): one entry per distinct call signature, keyed as JAX keys jit's
// cache: each argument's tree structure (with its static values), every leaf's shape, dtype and
// weak type, and the C++ argument types. An entry keeps the traced program and, once it has run
// on a back end, that back end's prepared (compiled) program, so a repeated call neither traces
// nor looks anything up by text.
#pragma once

#include <any>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cjax/array.h"
#include "cjax/backend.h"
#include "cjax/pytree.h"
#include "cjax/trace.h"

namespace cjax::detail {

// The key of a traced call: the arguments' structures (with static values), the leaves' avals and
// weak types, and the C++ argument types. `api` names the caller in the error for a null leaf.
std::string trace_cache_key(const std::vector<FlatTree>& flat, const char* arg_types,
                            std::string_view api);

struct JitEntry {
  ClosedTrace closed;
  std::any out_proto;  // f's result, a prototype for tree_unflatten
  std::vector<std::shared_ptr<const void>>
      pinned_policies;  // what the entry's key names by identity

  std::mutex mu;  // guards the two below
  std::shared_ptr<Backend> backend;
  std::shared_ptr<const PreparedProgram> program;
};

class JitCache {
 public:
  std::shared_ptr<JitEntry> find(const std::string& key) const;
  // Keeps `entry` unless another thread stored one under `key` first; returns the one kept.
  std::shared_ptr<JitEntry> insert(const std::string& key, std::shared_ptr<JitEntry> entry);
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<JitEntry>> entries_;
};

// Runs a cached trace on concrete arguments: with the installed back end's program prepared for
// it (on first use, and again if another back end was installed since), else on the interpreter.
// Arguments with `donated[i]` set give their buffers to the call and are deleted after it
// (jit's donate_argnums); empty: none.
std::vector<Array> run_jit_entry(JitEntry& entry, std::span<const Array> args,
                                 const std::vector<bool>& donated = {});

// With CJAX_LOG_COMPILES set (not 0): "cjax: jit: tracing for (f32[4,3], f32[]weak)" (`what` is
// "jit: tracing"), once per trace, as jax_log_compiles reports each compilation.
void log_trace(std::string_view what, std::span<const Array> leaves);
void log_trace(std::string_view what, std::span<const ShapedArray> avals);

}  // namespace cjax::detail
