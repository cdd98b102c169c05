// The plan of a compiled CPU program: the functions its object code defines, the order the
// executable calls them in, and the runtime calls the code makes. The persistent compilation
// cache keeps a plan's text beside the object code, so that a program found there is read and
// linked with no lowering and no MLIR (docs/backend.md, "The persistent compilation cache").
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/cpu/runtime_calls.h"
#include "ir/shaped_array.h"

namespace cjax::lower {

// One function of the object code, as the plan calls it.
struct CompiledFunction {
  std::string name;
  void (*entry)(void**) = nullptr;  // set once the object code is linked
  std::vector<ShapedArray> out_avals;
  std::vector<int> forwarded;  // per output: the input it returns unchanged, or -1
};

// A call of a compiled function: buffers are held in numbered slots (consts, then arguments,
// then every value a step produces); a slot is emptied after the last step that reads it.
struct Step {
  size_t function = 0;
  std::vector<size_t> inputs, outputs, release;
};

struct ProgramPlan {
  std::vector<CompiledFunction> functions;
  std::vector<Step> steps;
  size_t num_slots = 0;
  std::vector<size_t> output_slots;  // per outvar
  // What the compiled code's call table points to, in the order the code indexes it.
  std::vector<std::unique_ptr<RuntimeCall>> calls;
};

// The plan as text (its runtime calls by their jaxpr text).
std::string write_plan(const ProgramPlan& plan);

// The plan `text` holds, for a program of `num_inputs` inputs (consts and arguments) and
// `num_outputs` outputs; its runtime calls are rebuilt. Throws cjax::Error naming the line of
// anything malformed or inconsistent (a slot or function out of range), so that a damaged
// entry is never run.
ProgramPlan read_plan(std::string_view text, size_t num_inputs, size_t num_outputs);

// A compilation-cache entry's payload: a plan's text, then the object code.
std::string cache_payload(std::string_view plan_text, std::string_view object);
struct CachePayload {
  std::string_view plan, object;
};
// The parts of `payload`, or nullopt when it is not one.
std::optional<CachePayload> split_cache_payload(std::string_view payload);

}  // namespace cjax::lower
