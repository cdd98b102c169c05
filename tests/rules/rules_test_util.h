// Shared helpers for the tests of ir/rules/: avals, running a shape rule, catching its message,
// the keys a print rule shows, and a tiny jaxpr builder.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "ir/errors.h"
#include "ir/jaxpr.h"
#include "ir/rules/registry.h"

namespace cjax::test {

inline ShapedArray f32(Shape s, bool weak = false) {
  return ShapedArray(DType::f32, std::move(s), weak);
}
inline ShapedArray f64(Shape s) {
  return ShapedArray(DType::f64, std::move(s));
}
inline ShapedArray bf16(Shape s) {
  return ShapedArray(DType::bf16, std::move(s));
}
inline ShapedArray i32(Shape s, bool weak = false) {
  return ShapedArray(DType::i32, std::move(s), weak);
}
inline ShapedArray u32(Shape s) {
  return ShapedArray(DType::u32, std::move(s));
}
inline ShapedArray boolean(Shape s) {
  return ShapedArray(DType::bool_, std::move(s));
}

inline std::vector<ShapedArray> infer(std::string_view prim, std::vector<ShapedArray> in,
                                      const Params& params = {}) {
  return infer_avals(get_primitive(prim), in, params);
}

inline ShapedArray infer1(std::string_view prim, std::vector<ShapedArray> in,
                          const Params& params = {}) {
  auto out = infer(prim, std::move(in), params);
  REQUIRE(out.size() == 1);
  return out[0];
}

// The short form of each result: "f32[3]".
inline std::vector<std::string> infer_str(std::string_view prim, std::vector<ShapedArray> in,
                                          const Params& params = {}) {
  std::vector<std::string> out;
  for (const auto& a : infer(prim, std::move(in), params)) out.push_back(a.str_short());
  return out;
}

// The TypeError message of a failing shape rule ("<no error>" when it succeeds).
inline std::string infer_error(std::string_view prim, std::vector<ShapedArray> in,
                               const Params& params = {}) {
  try {
    infer(prim, std::move(in), params);
  } catch (const TypeError& e) {
    return e.what();
  }
  return "<no error>";
}

// The keys a primitive's print rule shows, in order.
inline std::vector<std::string> printed_keys(const Primitive& prim, const Params& params) {
  std::vector<std::string> keys;
  for (const ParamRef& r : prim.print_params(params)) keys.emplace_back(r.key);
  return keys;
}
inline std::vector<std::string> printed_keys(std::string_view prim, const Params& params) {
  return printed_keys(get_primitive(prim), params);
}

inline std::vector<std::string> keys_of(const Params& params) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : params) keys.push_back(k);
  return keys;
}

// Builds a jaxpr eqn by eqn, typing each eqn with its shape rule.
struct JaxprBuilder {
  Jaxpr j;
  Var in(ShapedArray a) {
    Var v(std::move(a));
    j.invars.push_back(v);
    return v;
  }
  Var constvar(ShapedArray a) {
    Var v(std::move(a));
    j.constvars.push_back(v);
    return v;
  }
  std::vector<Var> eqn_n(std::string_view prim, std::vector<Atom> ins, Params params = {}) {
    const Primitive& p = get_primitive(prim);
    std::vector<Var> outs;
    for (auto& a : infer_avals(p, avals_of(std::span<const Atom>(ins)), params))
      outs.emplace_back(std::move(a));
    j.eqns.push_back(Eqn{&p, std::move(ins), outs, std::move(params), {}});
    return outs;
  }
  Var eqn(std::string_view prim, std::vector<Atom> ins, Params params = {}) {
    auto outs = eqn_n(prim, std::move(ins), std::move(params));
    REQUIRE(outs.size() == 1);
    return outs[0];
  }
  JaxprRef done(std::vector<Atom> outs) {
    j.outvars = std::move(outs);
    return std::make_shared<const Jaxpr>(std::move(j));
  }
};

// { lambda ; a:<in>. let b = <prim> a in (b,) }
inline JaxprRef unary_jaxpr(std::string_view prim, ShapedArray in) {
  JaxprBuilder b;
  Var a = b.in(std::move(in));
  return b.done({b.eqn(prim, {a})});
}

}  // namespace cjax::test
