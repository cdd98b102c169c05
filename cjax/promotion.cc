#include "cjax/promotion.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <string>

#include "ir/errors.h"

namespace cjax {
namespace {

// Nodes of the lattice: the strong dtypes plus the weak Python types int_ and float_.
enum Node : int {
  b1,
  int_,
  float_,
  u8,
  u16,
  u32,
  u64,
  i8,
  i16,
  i32,
  i64,
  bf16,
  f16,
  f32,
  f64,
  kNumNodes
};
using NodeSet = uint32_t;
constexpr NodeSet bit(int n) {
  return NodeSet{1} << n;
}

// Each node's immediate successors (x64 disabled: u32 -> i32 instead of u32 -> i64).
constexpr std::array<NodeSet, kNumNodes> kEdges = {
    /*b1*/ bit(int_),
    /*int_*/ bit(u8) | bit(i8),
    /*float_*/ bit(bf16) | bit(f16),
    /*u8*/ bit(i16) | bit(u16),
    /*u16*/ bit(i32) | bit(u32),
    /*u32*/ bit(i32) | bit(u64),
    /*u64*/ bit(float_),
    /*i8*/ bit(i16),
    /*i16*/ bit(i32),
    /*i32*/ bit(i64),
    /*i64*/ bit(float_),
    /*bf16*/ bit(f32),
    /*f16*/ bit(f32),
    /*f32*/ bit(f64),
    /*f64*/ 0,
};

// upper_bounds()[n]: every node reachable from n, n included.
const std::array<NodeSet, kNumNodes>& upper_bounds() {
  static const std::array<NodeSet, kNumNodes> ubs = [] {
    std::array<NodeSet, kNumNodes> out{};
    for (int n = 0; n < kNumNodes; ++n) {
      NodeSet set = bit(n);
      for (;;) {
        NodeSet grown = set;
        for (int m = 0; m < kNumNodes; ++m)
          if (set & bit(m)) grown |= kEdges[m];
        if (grown == set) break;
        set = grown;
      }
      out[n] = set;
    }
    return out;
  }();
  return ubs;
}

int strong_node(DType t) {
  switch (t) {
    case DType::bool_:
      return b1;
    case DType::u8:
      return u8;
    case DType::u16:
      return u16;
    case DType::u32:
      return u32;
    case DType::u64:
      return u64;
    case DType::i8:
      return i8;
    case DType::i16:
      return i16;
    case DType::i32:
      return i32;
    case DType::i64:
      return i64;
    case DType::bf16:
      return bf16;
    case DType::f16:
      return f16;
    case DType::f32:
      return f32;
    case DType::f64:
      return f64;
    case DType::key_fry:
    case DType::opaque:
      break;
  }
  return -1;
}

// JAX's _jax_type: a weak dtype stands for its Python type (bool stays bool).
int jax_node(DTypeAndWeak t) {
  if (t.weak && t.dtype != DType::bool_) {
    if (is_floating(t.dtype)) return float_;
    if (is_integer(t.dtype)) return int_;
  }
  return strong_node(t.dtype);
}

DType node_dtype(int n) {
  constexpr DType kDTypes[kNumNodes] = {DType::bool_, DType::i32, DType::f32, DType::u8,
                                        DType::u16,   DType::u32, DType::u64, DType::i8,
                                        DType::i16,   DType::i32, DType::i64, DType::bf16,
                                        DType::f16,   DType::f32, DType::f64};
  return kDTypes[n];
}

std::string describe(std::span<const DTypeAndWeak> args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    out += short_name(args[i].dtype);
    if (args[i].weak) out += " (weak)";
  }
  return out;
}

int least_upper_bound(NodeSet nodes, std::span<const DTypeAndWeak> args) {
  const auto& ub = upper_bounds();
  NodeSet common = ~NodeSet{0};
  for (int n = 0; n < kNumNodes; ++n)
    if (nodes & bit(n)) common &= ub[n];
  NodeSet lub = common & nodes;
  if (!lub) {
    for (int c = 0; c < kNumNodes; ++c)
      if ((common & bit(c)) && (common & ~ub[c]) == 0) lub |= bit(c);
  }
  for (int c = 0; c < kNumNodes; ++c)
    if (lub == bit(c)) return c;
  throw TypeError(fmt::format("input dtypes ({}) have no available implicit dtype promotion path",
                              describe(args)));
}

NodeSet node_set(std::span<const DTypeAndWeak> args, bool use_weak) {
  NodeSet set = 0;
  for (const auto& a : args) {
    int n = use_weak ? jax_node(a) : strong_node(a.dtype);
    if (n < 0)
      throw TypeError(fmt::format(
          "input dtypes ({}) have no available implicit dtype promotion path", describe(args)));
    set |= bit(n);
  }
  return set;
}

}  // namespace

DType default_int_dtype() {
  return DType::i32;
}
DType default_uint_dtype() {
  return DType::u32;
}
DType default_float_dtype() {
  return DType::f32;
}

DType promote_types(DType a, DType b) {
  DTypeAndWeak args[] = {{a, false}, {b, false}};
  return node_dtype(least_upper_bound(node_set(args, false), args));
}

DTypeAndWeak lattice_result_type(std::span<const DTypeAndWeak> args) {
  if (args.empty()) throw TypeError("at least one array or dtype is required");
  DTypeAndWeak out;
  bool all_weak = true, same_dtype = true;
  for (const auto& a : args) {
    all_weak = all_weak && a.weak;
    same_dtype = same_dtype && a.dtype == args[0].dtype;
  }
  if (args.size() == 1) {
    out = args[0];
  } else if (same_dtype && !all_weak) {
    out = {args[0].dtype, false};
  } else if (all_weak) {
    // The bound of the strong counterparts, made weak.
    out = {node_dtype(least_upper_bound(node_set(args, false), args)), true};
  } else {
    int n = least_upper_bound(node_set(args, true), args);
    out = {node_dtype(n), n == int_ || n == float_};
  }
  out.weak = out.weak && out.dtype != DType::bool_;
  return out;
}

DTypeAndWeak result_type(std::span<const DTypeAndWeak> args) {
  DTypeAndWeak out = lattice_result_type(args);
  if (out.weak) {
    if (is_floating(out.dtype))
      out.dtype = default_float_dtype();
    else if (is_unsigned_integer(out.dtype))
      out.dtype = default_uint_dtype();
    else if (is_integer(out.dtype))
      out.dtype = default_int_dtype();
  }
  return out;
}

DType to_inexact_dtype(DType t) {
  if (t == DType::i64 || t == DType::u64) return DType::f64;
  if (t == DType::bool_ || is_integer(t)) return DType::f32;
  return t;
}

DType to_numeric_dtype(DType t) {
  return t == DType::bool_ ? DType::i32 : t;
}

}  // namespace cjax
