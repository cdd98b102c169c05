// Internal to compiler/cpu/: lowering a jaxpr to MLIR's tensor-level dialects. One rule per
// primitive turns an eqn's input tensors into its output tensors; rules live in the lower_*.cc
// files, each with a registration function, and the table is built on first use.
#pragma once

#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/cpu/executable.h"
#include "compiler/cpu/runtime_calls.h"
#include "ir/jaxpr.h"
#include "ir/params.h"
#include "passes/repeated_calls.h"
#include "runtime/blas_dot.h"

namespace cjax::lower {

// The call bodies a module compiles once each, as private functions its callers call (see
// passes/repeated_calls.h), and the functions made so far, by body key. One per module: the
// functions lower_function adds share them.
struct OutlinedCalls {
  explicit OutlinedCalls(const Jaxpr& program) : repeated(program) {}
  RepeatedCalls repeated;
  std::unordered_map<const std::string*, std::string> function_of;  // key -> symbol
};

// The state of one lowering: the builder, the runtime calls made so far, and the output buffers
// that a runtime call may write into directly (instead of a fresh buffer and a copy).
struct LoweringState {
  mlir::OpBuilder& b;
  mlir::ModuleOp module;
  std::vector<std::unique_ptr<RuntimeCall>>& calls;
  std::unordered_map<const void*, mlir::Value> output_buffers;  // Var id -> memref argument
  std::string where;       // for messages: the example or file being lowered
  mlir::Value call_table;  // main's first argument: the address of the RuntimeCall* table
  DotPath dot_path = DotPath::by_size;
  // The GPU back end: a device_put to pinned host or device memory becomes a runtime call that
  // moves the data (elsewhere it forwards its operand).
  bool memory_transfers = false;
  OutlinedCalls* outlined = nullptr;  // null: every call is lowered inline
};

struct EqnLowering {
  LoweringState& state;
  const Eqn& eqn;
  mlir::Location loc;
  mlir::OpBuilder& b() { return state.b; }
};

using LowerRule =
    std::function<std::vector<mlir::Value>(EqnLowering&, const std::vector<mlir::Value>& inputs)>;

// Each family file adds the rules of its primitives by name; the table keeps them by primitive
// (ir/rules/per_primitive.h).
class LowerRuleTable {
 public:
  virtual void add(std::string_view prim, LowerRule rule) = 0;

 protected:
  ~LowerRuleTable() = default;
};

void register_elementwise_rules(LowerRuleTable& t);
void register_structural_rules(LowerRuleTable& t);
void register_reduction_rules(LowerRuleTable& t);
void register_dot_rules(LowerRuleTable& t);
void register_control_flow_rules(LowerRuleTable& t);
void register_random_rules(LowerRuleTable& t);
void register_gather_scatter_rules(LowerRuleTable& t);

// The rule for `prim`, or null when it has none (compiled code then calls its interpreter kernel).
const LowerRule* find_lower_rule(const Primitive& prim);

// Lowers `jaxpr`'s eqns with its constvars and invars bound to `args` (tensors); returns the
// tensors of its outvars. Call-like eqns (jit, remat2, ...) are lowered inline, recursively, but
// for the repeated ones `state.outlined` names: those call a function of their body.
std::vector<mlir::Value> lower_jaxpr_body(LoweringState& state, const Jaxpr& jaxpr,
                                          const std::vector<mlir::Value>& args);

// An empty module that declares the runtime-call callback, for lower_function to fill.
mlir::OwningOpRef<mlir::ModuleOp> new_module(mlir::MLIRContext& ctx);

// Appends `func.func @name(call_table, consts..., args..., outputs...)` on memrefs (outputs that
// are inputs excluded, see forwarded_inputs) to `module`, with the C interface, writing each
// output into its buffer. `call_table` (i64) is the address of an array of RuntimeCall pointers,
// indexed by the calls' positions in `calls` (shared by every function of the module); passing it
// at run time keeps addresses out of the IR, so `cjax lower` prints the same module every time.
// With `outlined`, the repeated calls it names become calls of private functions
// `@body<N>(call_table, args...) -> results` on tensors, one per body. The inputs that
// `writable` marks (by position among constvars then invars) are buffers the caller hands over:
// no other argument shares them and nothing reads them after the call, so the function may
// write over them (a loop's carry starts in its init's buffer instead of a copy of it). An
// output that `tied` gives a writable input (per outvar, the input's position or -1) has no
// buffer of its own: it is copied into that input's buffer as the function returns, and the
// executable hands that buffer back as the output (as for a forwarded input).
void lower_function(mlir::ModuleOp module, const Jaxpr& jaxpr,
                    std::vector<std::unique_ptr<RuntimeCall>>& calls, const std::string& where,
                    const std::string& name, DotPath dot_path = DotPath::by_size,
                    bool memory_transfers = false, OutlinedCalls* outlined = nullptr,
                    const std::vector<bool>& writable = {}, const std::vector<int>& tied = {});

// For each outvar, the position among (constvars, invars) of the input it returns unchanged, or
// -1. Such outputs get no buffer in main's signature: the executable returns the input itself.
std::vector<int> forwarded_inputs(const Jaxpr& jaxpr);

// ---- Helpers shared by the rule files -------------------------------------------------------

// The MLIR element type of a dtype; throws cjax::UnsupportedError for dtypes the back end does
// not compile (16-bit floats, complex, opaque).
mlir::Type element_type(mlir::OpBuilder& b, DType t, std::string_view prim);
mlir::RankedTensorType tensor_type(mlir::OpBuilder& b, const ShapedArray& aval,
                                   std::string_view prim);
mlir::MemRefType memref_type(mlir::OpBuilder& b, const ShapedArray& aval, std::string_view prim);

// A rank-0 tensor holding a literal's value.
mlir::Value literal_tensor(mlir::OpBuilder& b, mlir::Location loc, const Literal& l);

// A linalg.generic over `out`'s shape. Each input is read through `maps[i]`; inputs of rank 0
// given no map are broadcast. `body` gets the scalars (inputs then the output's) and returns the
// result scalar. `reduction_dims` makes those loop dims reductions (the output map drops them).
using ScalarBody = std::function<mlir::Value(mlir::OpBuilder&, mlir::Location, mlir::ValueRange)>;
mlir::Value elementwise(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                        const ShapedArray& out, const ScalarBody& body);
mlir::Value generic_op(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                       const std::vector<mlir::AffineMap>& input_maps, mlir::AffineMap out_map,
                       unsigned num_loops, const std::vector<bool>& is_reduction, mlir::Value init,
                       const ScalarBody& body);
// An empty tensor of `aval`, or one filled with `fill` (a constant of its element type).
mlir::Value empty_tensor(EqnLowering& el, const ShapedArray& aval);
mlir::Value filled_tensor(EqnLowering& el, const ShapedArray& aval, mlir::TypedAttr fill);

// Emits a call to `call` (kept in state.calls) that reads `inputs` and writes fresh buffers of
// `out_avals` (or the function's own output buffers where an outvar is returned directly).
std::vector<mlir::Value> emit_runtime_call(EqnLowering& el, std::unique_ptr<RuntimeCall> call,
                                           const std::vector<mlir::Value>& inputs,
                                           const std::vector<ShapedArray>& out_avals);

// Marks a lowered function of the program, whose buffer arguments never alias a buffer it
// writes: pipeline.cc declares its pointer parameters noalias for LLVM and keeps it out of line.
inline constexpr const char* kNoaliasBuffers = "cjax.noalias_buffers";

// The name of the C function compiled code calls for every RuntimeCall.
inline constexpr const char* kRuntimeCallSymbol = "cjax_runtime_call";

// Thrown by a rule that cannot compile this eqn natively (a dtype or parameter it does not
// handle); the eqn then runs the interpreter's kernel through a runtime call.
struct NotNative {
  std::string why;
};
std::string unsupported_message(const EqnLowering& el, const std::string& what);
[[noreturn]] void not_native(const EqnLowering& el, const std::string& why);

// Products of at most this many multiply-adds compile as native loops under DotPath::by_size:
// up to it, they measured as fast alone and faster inside programs than a call into OpenBLAS
// (docs/backend.md, "Dots: loops or OpenBLAS").
inline constexpr int64_t kNativeDotMaxMultiplyAdds = int64_t{1} << 12;

// dot_general as a call into OpenBLAS running `plan` (runtime::plan_dot).
std::vector<mlir::Value> blas_dot(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                                  runtime::DotPlan plan);

// The eqn as a runtime call of the interpreter's kernel for its primitive; throws
// cjax::UnsupportedError naming the primitive when there is none.
std::vector<mlir::Value> kernel_fallback(EqnLowering& el, const std::vector<mlir::Value>& inputs,
                                         const std::string& why);

}  // namespace cjax::lower
