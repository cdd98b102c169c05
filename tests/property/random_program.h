// Random, well-typed programs for the property tests. A Program is plain data drawn from a seed:
// input shapes and a list of instructions whose operand choices are raw numbers, resolved modulo
// the values available when the program is traced. So any sub-list of instructions is again a
// valid program, which is what lets a failing program be shrunk by deleting instructions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cjax/api.h"

namespace prop {

enum class Op {
  unary,      // sin, cos, tanh, logistic, exp(sin x), log(1+x²), sqrt(1+x²), x³, ...
  binary,     // add, sub, mul, x / (2 + sin y), with numpy broadcasting
  scalar,     // x * 0.5 + 1.5 (weak-typed literals)
  dot,        // dot_general with contracting and batch dims
  reduce,     // reduce_sum / reduce_prod over some axes
  transpose,  // a random permutation
  reshape,    // flatten, or insert a unit axis
  broadcast,  // broadcast_in_dim to a new leading axis of size 2
  name,       // checkpoint_name(x, "a" | "b" | "c")
  remat,      // checkpoint(body, policy) over the values so far (nested), or a jit call
};

struct Instr {
  Op op = Op::unary;
  uint32_t a = 0, b = 0, c = 0;  // operand picks and variants
  std::vector<Instr> body;       // remat only
  bool jit = false;              // remat only: a jit call (`jit[name=f]`) instead
};

struct Program {
  uint64_t seed = 0;
  std::vector<cjax::Shape> inputs;
  std::vector<Instr> instrs;
  uint32_t out_pick = 0;  // odd: a second output, the value out_pick/2 mod count
};

struct GenOptions {
  int max_instrs = 8;
  int max_remat_depth = 2;
  // A quarter of the remat instructions become jit calls (as jnp functions and jax.jit trace).
  // Off by default: a jit whose outputs are unused prints its body's outputs as `_` (JAX's name
  // suggestion), which the parser cannot always match back, so `roundtrip` fails on some.
  bool jit_calls = false;
};

Program generate(uint64_t seed, const GenOptions& opts = {});

// The program as pseudo-code, one instruction per line (for failure reports).
std::string describe(const Program& p);

// Traces the program (f64 inputs) to a jaxpr.
cjax::Jaxpr trace(const Program& p);

// Number of instructions, nested bodies included.
size_t size(const Program& p);

// Every program obtained by one shrinking step: one instruction deleted, a remat replaced by its
// body, the second output dropped, an input made a scalar.
std::vector<Program> shrink_candidates(const Program& p);

// The policies a remat instruction and the gradient property choose from (nullptr: JAX's default).
struct NamedPolicy {
  std::string name;
  cjax::PolicyRef policy;
};
const std::vector<NamedPolicy>& all_policies();

}  // namespace prop
