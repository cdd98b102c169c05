// Numerical checks of autodiff rules on small jaxprs, evaluated by the reference interpreter in
// f64: jvp against central finite differences, vjp by the dot-product test <vjp(ct), t> ==
// <ct, jvp(t)>, and for linear ops transpose(transpose(f)) == f plus <T(ct), x> == <ct, f(x)>.
#pragma once

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/lax_params.h"
#include "ir/print/printer.h"
#include "passes/builder.h"
#include "passes/jvp.h"
#include "passes/transpose.h"
#include "passes/vjp.h"
#include "runtime/buffer.h"
#include "runtime/interpreter.h"

namespace cjax::adtest {

using runtime::Buffer;
using Rng = std::mt19937;

// One input: its aval and the range its random values are drawn from (integers: inclusive).
// `both_signs`: |value| in [lo, hi] with a random sign (keeps away from a kink at 0).
struct Arg {
  ShapedArray aval;
  double lo = -1, hi = 1;
  bool both_signs = false;
};
inline Arg f64(Shape s, double lo = -1, double hi = 1) {
  return {ShapedArray(DType::f64, std::move(s)), lo, hi};
}
inline Arg f64_pm(Shape s, double lo, double hi) {
  return {ShapedArray(DType::f64, std::move(s)), lo, hi, true};
}
inline Arg i32(Shape s, double lo, double hi) {
  return {ShapedArray(DType::i32, std::move(s)), lo, hi};
}
inline Arg pred(Shape s) {
  return {ShapedArray(DType::bool_, std::move(s)), 0, 1};
}

using Body = std::function<std::vector<Atom>(JaxprBuilder&, const std::vector<Atom>&)>;

inline Jaxpr make_jaxpr(const std::vector<Arg>& args, const Body& body) {
  JaxprBuilder b;
  std::vector<Var> invars;
  std::vector<Atom> ins;
  for (const Arg& a : args) {
    invars.emplace_back(a.aval);
    ins.push_back(invars.back());
  }
  std::vector<Atom> outs = body(b, ins);
  return b.build(std::move(invars), std::move(outs));
}

inline Jaxpr one_eqn(std::string_view prim, const std::vector<Arg>& args, Params params = {}) {
  return make_jaxpr(args, [&](JaxprBuilder& b, const std::vector<Atom>& in) {
    std::vector<Var> outs = b.emit(prim, in, params);
    return std::vector<Atom>(outs.begin(), outs.end());
  });
}

inline Buffer from_doubles(const ShapedArray& aval, const std::vector<double>& v) {
  switch (aval.dtype) {
    case DType::f64:
      return Buffer::from_data<double>(aval, std::span<const double>(v));
    case DType::f32: {
      std::vector<float> f(v.begin(), v.end());
      return Buffer::from_data<float>(aval, std::span<const float>(f));
    }
    case DType::i32: {
      std::vector<int32_t> f;
      for (double x : v) f.push_back(int32_t(x));
      return Buffer::from_data<int32_t>(aval, std::span<const int32_t>(f));
    }
    case DType::bool_: {
      std::unique_ptr<bool[]> f(new bool[v.size() + 1]);
      for (size_t i = 0; i < v.size(); ++i) f[i] = v[i] != 0;
      return Buffer::from_data<bool>(aval, std::span<const bool>(f.get(), v.size()));
    }
    default:
      FAIL("from_doubles: unsupported dtype " << long_name(aval.dtype));
  }
  return {};
}

inline Buffer random_buffer(const Arg& a, Rng& rng) {
  std::vector<double> v(size_t(a.aval.size()));
  for (double& x : v) {
    if (!is_floating(a.aval.dtype)) {
      std::uniform_int_distribution<int64_t> d(int64_t(a.lo), int64_t(a.hi));
      x = double(d(rng));
    } else {
      std::uniform_real_distribution<double> d(a.lo, a.hi);
      x = d(rng);
      if (a.both_signs && std::uniform_int_distribution<int>(0, 1)(rng)) x = -x;
    }
  }
  return from_doubles(a.aval, v);
}

inline Buffer random_like(const ShapedArray& aval, Rng& rng) {
  if (!is_floating(aval.dtype)) return Buffer::zeros(ShapedArray(aval.dtype, aval.shape));
  return random_buffer(Arg{ShapedArray(aval.dtype, aval.shape), -1, 1}, rng);
}

inline std::vector<Buffer> eval(const Jaxpr& j, const std::vector<Buffer>& args) {
  return runtime::eval_jaxpr(j, std::span<const Buffer>(args));
}

// x + h * t, elementwise, in x's dtype.
inline Buffer axpy(const Buffer& x, double h, const Buffer& t) {
  std::vector<double> a = x.to_doubles(), b = t.to_doubles();
  for (size_t i = 0; i < a.size(); ++i) a[i] += h * b[i];
  return from_doubles(x.aval(), a);
}

inline double dot(const Buffer& a, const Buffer& b) {
  std::vector<double> x = a.to_doubles(), y = b.to_doubles();
  REQUIRE(x.size() == y.size());
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

inline double max_abs(const Buffer& a) {
  double m = 0;
  for (double x : a.to_doubles()) m = std::max(m, std::abs(x));
  return m;
}

inline void check_close(const Buffer& got, const std::vector<double>& want, double tol,
                        const std::string& what) {
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO(what << " element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

inline void check_equal(const Buffer& got, const Buffer& want, double tol,
                        const std::string& what) {
  REQUIRE(got.aval().shape == want.aval().shape);
  check_close(got, want.to_doubles(), tol, what);
}

inline std::string program(const Jaxpr& j) {
  return to_string(j);
}

// jvp against central differences and vjp by the dot-product test, on `trials` random points.
// `tol` bounds the finite-difference error, `dot_tol` the (relative) dot-product mismatch.
inline void check_jvp_vjp(const Jaxpr& f, const std::vector<Arg>& args, Rng& rng, int trials = 2,
                          double tol = 1e-6, double h = 1e-5, double dot_tol = 1e-9) {
  size_t n = args.size(), nout = f.outvars.size();
  JvpJaxpr jvp = jvp_jaxpr(f, std::vector<bool>(n, true), /*instantiate=*/true);
  VjpResult vjp = vjp_jaxpr(f);
  INFO("f:\n"
       << program(f) << "\njvp:\n"
       << program(jvp.jaxpr) << "\nfwd:\n"
       << program(vjp.fwd) << "\nbwd:\n"
       << program(vjp.bwd));
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<Buffer> x, t, jvp_in;
    for (const Arg& a : args) x.push_back(random_buffer(a, rng));
    jvp_in = x;
    for (size_t i = 0; i < n; ++i)
      if (is_floating(args[i].aval.dtype)) {
        t.push_back(random_like(args[i].aval, rng));
        jvp_in.push_back(t.back());
      } else {
        t.emplace_back();
      }
    std::vector<Buffer> y = eval(f, x);
    std::vector<Buffer> jout = eval(jvp.jaxpr, jvp_in);
    REQUIRE(jout.size() == 2 * nout);
    for (size_t k = 0; k < nout; ++k) check_equal(jout[k], y[k], 1e-12, "jvp primal output");

    // Central differences.
    std::vector<Buffer> xp, xm;
    for (size_t i = 0; i < n; ++i) {
      xp.push_back(t[i] ? axpy(x[i], h, t[i]) : x[i]);
      xm.push_back(t[i] ? axpy(x[i], -h, t[i]) : x[i]);
    }
    std::vector<Buffer> yp = eval(f, xp), ym = eval(f, xm);
    for (size_t k = 0; k < nout; ++k) {
      if (!is_floating(y[k].aval().dtype)) continue;
      std::vector<double> a = yp[k].to_doubles(), b = ym[k].to_doubles(), fd(a.size());
      for (size_t i = 0; i < a.size(); ++i) fd[i] = (a[i] - b[i]) / (2 * h);
      check_close(jout[nout + k], fd, tol, fmt::format("jvp tangent of output {}", k));
    }

    // vjp: the forward program's outputs, then <vjp(ct), t> == <ct, jvp(t)>.
    std::vector<Buffer> fwd = eval(vjp.fwd, x);
    REQUIRE(fwd.size() == nout + vjp.num_residuals);
    for (size_t k = 0; k < nout; ++k) check_equal(fwd[k], y[k], 1e-12, "vjp forward output");
    std::vector<Buffer> bwd_in(fwd.begin() + long(nout), fwd.end()), cts;
    for (size_t k = 0; k < nout; ++k) {
      cts.push_back(random_like(y[k].aval(), rng));
      bwd_in.push_back(cts.back());
    }
    std::vector<Buffer> in_cts = eval(vjp.bwd, bwd_in);
    REQUIRE(in_cts.size() == n);
    double lhs = 0, rhs = 0, scale = 1;
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(in_cts[i].aval().shape == args[i].aval.shape);
      if (!t[i]) continue;
      lhs += dot(in_cts[i], t[i]);
      scale += std::abs(dot(in_cts[i], in_cts[i]));
    }
    for (size_t k = 0; k < nout; ++k) {
      if (!is_floating(y[k].aval().dtype)) continue;
      rhs += dot(cts[k], jout[nout + k]);
      scale += std::abs(dot(jout[nout + k], jout[nout + k]));
    }
    INFO("<vjp(ct), t> = " << lhs << ", <ct, jvp(t)> = " << rhs);
    CHECK(std::abs(lhs - rhs) <= dot_tol * scale);
  }
}

// For f linear in the inputs marked `linear`: <T(ct), x> == <ct, f(x)>, and transposing twice
// gives back f.
inline void check_linear(const Jaxpr& f, const std::vector<Arg>& args,
                         const std::vector<bool>& linear, Rng& rng, int trials = 2,
                         double dot_tol = 1e-9) {
  Jaxpr t = transpose_jaxpr(f, linear);
  size_t n_nonlinear = 0;
  for (bool l : linear) n_nonlinear += !l;
  std::vector<bool> t_linear(t.invars.size(), true);
  for (size_t i = 0; i < n_nonlinear; ++i) t_linear[i] = false;
  Jaxpr tt = transpose_jaxpr(t, t_linear);
  INFO("f:\n" << program(f) << "\nT:\n" << program(t) << "\nTT:\n" << program(tt));
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<Buffer> x, nonlin, lin, cts;
    for (const Arg& a : args) x.push_back(random_buffer(a, rng));
    for (size_t i = 0; i < args.size(); ++i) (linear[i] ? lin : nonlin).push_back(x[i]);
    std::vector<Buffer> y = eval(f, x);
    std::vector<Buffer> t_in = nonlin;
    for (const Buffer& yk : y) {
      cts.push_back(random_like(yk.aval(), rng));
      t_in.push_back(cts.back());
    }
    std::vector<Buffer> tx = eval(t, t_in);
    REQUIRE(tx.size() == lin.size());
    double lhs = 0, rhs = 0, scale = 1;
    for (size_t i = 0; i < lin.size(); ++i) {
      REQUIRE(tx[i].aval().shape == lin[i].aval().shape);
      lhs += dot(tx[i], lin[i]);
      scale += std::abs(dot(tx[i], tx[i])) + std::abs(dot(lin[i], lin[i]));
    }
    for (size_t k = 0; k < y.size(); ++k) {
      rhs += dot(cts[k], y[k]);
      scale += std::abs(dot(y[k], y[k]));
    }
    INFO("<T(ct), x> = " << lhs << ", <ct, f(x)> = " << rhs);
    CHECK(std::abs(lhs - rhs) <= dot_tol * scale);

    std::vector<Buffer> tt_in = nonlin;
    tt_in.insert(tt_in.end(), lin.begin(), lin.end());
    std::vector<Buffer> yy = eval(tt, tt_in);
    REQUIRE(yy.size() == y.size());
    for (size_t k = 0; k < y.size(); ++k)
      check_equal(yy[k], y[k], dot_tol * 1e-3, "transpose(transpose(f))");
  }
}

// A random shape of rank 0..max_rank with dims 1..max_dim.
inline Shape random_shape(Rng& rng, int max_rank = 3, int max_dim = 4) {
  int rank = std::uniform_int_distribution<int>(0, max_rank)(rng);
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(std::uniform_int_distribution<int>(1, max_dim)(rng));
  return s;
}

// A random shape of rank >= 1.
inline Shape random_nonscalar_shape(Rng& rng, int max_rank = 3, int max_dim = 4) {
  Shape s = random_shape(rng, max_rank - 1, max_dim);
  s.push_back(std::uniform_int_distribution<int>(2, max_dim)(rng));
  return s;
}

// An operand shape that broadcasts to `out`: `out` itself, rank 0, or `out` with some dims 1.
inline Shape broadcast_operand(Rng& rng, const Shape& out) {
  int kind = std::uniform_int_distribution<int>(0, 3)(rng);
  if (kind == 0) return {};
  Shape s = out;
  if (kind == 1)
    for (int64_t& d : s)
      if (std::uniform_int_distribution<int>(0, 1)(rng)) d = 1;
  return s;
}

}  // namespace cjax::adtest
