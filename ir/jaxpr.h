// The jaxpr IR: variables, literals, equations and jaxprs, mirroring JAX's core data structures.
// A Jaxpr is an immutable-by-convention value; passes build new ones.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"
#include "ir/source_info.h"

namespace cjax {

// A variable: an aval plus identity. Two Vars are the same variable iff they share a node.
class Var {
 public:
  Var() = default;  // the null Var
  explicit Var(ShapedArray aval);
  // A dropped output (printed `_`): the eqn produces it, nothing may read it.
  static Var drop(ShapedArray aval);

  const ShapedArray& aval() const { return node_->aval; }
  bool is_drop() const { return node_->dropped; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const Var& o) const { return node_ == o.node_; }
  bool operator<(const Var& o) const { return node_ < o.node_; }
  const void* id() const { return node_.get(); }

  // A name to prefer when printing (set by the parser from the source text); empty = none.
  const std::string& hint() const { return node_->hint; }
  void set_hint(std::string h) const { node_->hint = std::move(h); }

 private:
  struct Node {
    ShapedArray aval;
    bool dropped = false;
    mutable std::string hint;
  };
  std::shared_ptr<Node> node_;
};

struct VarHash {
  size_t operator()(const Var& v) const { return std::hash<const void*>()(v.id()); }
};

// An inline scalar constant: `3.0:f32[]`, `2:i32[]`, `True:bool[]`. An elided array constant
// (`[...]:f32[3]`, JAX's simplified-constants mode) is a Literal with `elided` set and no value.
struct Literal {
  ShapedArray aval;
  std::variant<bool, int64_t, uint64_t, double> value = 0.0;
  bool elided = false;
  // A constant array value rather than a Python scalar: JAX's instantiated zero tangents are
  // jax.Arrays, which linearization's tracing does not inline, so a staged eqn that reads one
  // makes it a residual (the known side returns it, printed as this literal). Not printed.
  bool array_constant = false;

  static Literal of(double v, DType t, bool weak = false);  // value rounded to t
  static Literal of_int(int64_t v, DType t, bool weak = false);
  static Literal of_bool(bool v);
  double as_double() const;
  int64_t as_int() const;
  // The value as JAX prints it: Python's repr of the scalar (`3.0`, `1e-06`, `2`, `True`, `nan`),
  // `[...]` when elided. No type suffix.
  std::string value_str() const;
};

// Python's repr() of a double: shortest round-trip digits, `3.0`, `1e-06`, `1e+16`, `inf`, `nan`.
std::string python_float_repr(double v);

// An equation operand: a variable or a literal.
class Atom {
 public:
  Atom(Var v) : v_(std::move(v)) {}      // NOLINT: implicit on purpose
  Atom(Literal l) : v_(std::move(l)) {}  // NOLINT
  bool is_var() const { return std::holds_alternative<Var>(v_); }
  bool is_literal() const { return !is_var(); }
  const Var& var() const { return std::get<Var>(v_); }
  const Literal& literal() const { return std::get<Literal>(v_); }
  const ShapedArray& aval() const { return is_var() ? var().aval() : literal().aval; }

 private:
  std::variant<Var, Literal> v_;
};

struct Primitive;

struct Eqn {
  const Primitive* prim = nullptr;
  std::vector<Atom> inputs;
  std::vector<Var> outputs;
  Params params;
  SourceInfo source;
};

// A constant array captured by a jaxpr (a constvar's value): row-major bytes of aval.nbytes().
struct ConstValue {
  ShapedArray aval;
  std::shared_ptr<const void> data;
};

// Names for reports: the function and the flattened arguments (`W1`, `params[0]`, `opt['w']`).
struct DebugInfo {
  std::string function_name;
  std::vector<std::string> arg_names;
  // JAX's result_paths: one per output leaf, "result" for a lone array, "result[1].W1" for the
  // leaf `.W1` of a returned tuple's second element (empty when unknown, e.g. a parsed file).
  std::vector<std::string> result_paths;
};

struct Jaxpr {
  std::vector<Var> constvars;
  std::vector<Var> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;
  std::vector<ConstValue> consts;  // empty, or one per constvar
  std::shared_ptr<const DebugInfo> debug;

  std::vector<ShapedArray> in_avals() const;
  std::vector<ShapedArray> out_avals() const;
};

// Equation-level helpers used by every pass.
std::vector<ShapedArray> avals_of(std::span<const Atom> atoms);
std::vector<ShapedArray> avals_of(std::span<const Var> vars);

// JAX's convert_constvars_jaxpr: the constvars become the leading invars (a call or remat2 eqn
// then passes the captured values as its first operands); consts are dropped.
void convert_constvars(Jaxpr& jaxpr);

}  // namespace cjax
