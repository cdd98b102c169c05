// vmap's values: every batching rule against a loop of unbatched calls (every in_axes position,
// unbatched operands, random shapes), compiled and interpreted; compositions with grad, jit,
// checkpoint and vmap itself; per-example gradients against finite differences; the errors.
#include <catch2/catch.hpp>

#include <functional>
#include <random>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"
#include "ir/parse/parser.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;
using Axes = std::vector<std::optional<int>>;
using Fn = std::function<Array(const Array&, const Array&)>;
const auto none = std::nullopt;

Array random_f32(std::mt19937& rng, const Shape& shape) {
  return testing::random_f64(rng, shape).astype(DType::f32);
}

// Example i of x mapped along `axis` (x itself when unmapped).
Array example(const Array& x, std::optional<int> axis, int64_t i) {
  if (!axis) return x;
  std::vector<Index> index(static_cast<size_t>(x.ndim()), all);
  index[static_cast<size_t>(*axis)] = i;
  return jnp::getitem(x, index);
}

// f on each example, stacked along axis 0: what vmap(f, axes)(a, b) must equal.
Array loop(const Fn& f, const Array& a, const Array& b, const Axes& axes, int64_t n) {
  std::vector<Array> outs;
  for (int64_t i = 0; i < n; ++i) outs.push_back(f(example(a, axes[0], i), example(b, axes[1], i)));
  return jnp::stack(outs);
}

// vmap(f) on both back ends against the interpreted loop.
void check_against_loop(const Fn& f, const Array& a, const Array& b, const Axes& axes, int64_t n) {
  INFO("in_axes (" << (axes[0] ? std::to_string(*axes[0]) : "None") << ", "
                   << (axes[1] ? std::to_string(*axes[1]) : "None") << ") on "
                   << a.aval().str_short() << ", " << b.aval().str_short());
  Array want;
  {
    UseInterpreter interp;
    want = loop(f, a, b, axes, n);
    test::require_close(vmap(f, axes)(a, b).buffer(), want.buffer());
  }
  test::require_close(vmap(f, axes)(a, b).buffer(), want.buffer());  // compiled
}

// Each axis placement of a batch of n for operands of one example's shapes.
void check_all_axes(const Fn& f, const Shape& sa, const Shape& sb, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t n = 3;
  auto batched = [&](Shape s, int axis) {
    s.insert(s.begin() + axis, n);
    return random_f32(rng, s);
  };
  for (int ia = -1; ia <= int(sa.size()); ++ia)
    for (int ib = -1; ib <= int(sb.size()); ++ib) {
      if (ia < 0 && ib < 0) continue;
      const Array a = ia < 0 ? random_f32(rng, sa) : batched(sa, ia);
      const Array b = ib < 0 ? random_f32(rng, sb) : batched(sb, ib);
      const auto axis = [](int i) { return i < 0 ? std::optional<int>() : std::optional<int>(i); };
      check_against_loop(f, a, b, {axis(ia), axis(ib)}, n);
    }
}

TEST_CASE("vmap of elementwise ops equals a loop, for every in_axes placement") {
  check_all_axes([](const Array& a, const Array& b) { return a * b + jnp::sin(a); }, {2, 3}, {2, 3},
                 1);
  check_all_axes([](const Array& a, const Array& b) { return a - b; }, {4}, {}, 2);
  check_all_axes([](const Array& a, const Array& b) { return jnp::where(a > b, a, b * 2.0); },
                 {2, 3}, {3}, 3);
  check_all_axes([](const Array& a, const Array& b) { return jnp::clip(a, b, std::nullopt); },
                 {2, 3}, {}, 4);
  check_all_axes(
      [](const Array& a, const Array& b) { return (a > 0.0).astype(DType::f32) + jnp::exp(b); },
      {3}, {3}, 5);
}

TEST_CASE("vmap of dot and matmul equals a loop, for every in_axes placement") {
  auto dot = [](const Array& a, const Array& b) { return jnp::dot(a, b); };
  auto matmul = [](const Array& a, const Array& b) { return jnp::matmul(a, b); };
  check_all_axes(dot, {3, 4}, {4}, 10);
  check_all_axes(dot, {4}, {4, 5}, 11);
  check_all_axes(matmul, {2, 3}, {3, 4}, 12);
  check_all_axes(matmul, {2, 2, 3}, {2, 3, 4}, 13);
}

TEST_CASE("vmap of reductions and shape ops equals a loop, for every in_axes placement") {
  check_all_axes([](const Array& a, const Array& b) { return jnp::sum(a, 1) + jnp::max(b); },
                 {2, 3}, {4}, 20);
  check_all_axes(
      [](const Array& a, const Array& b) {
        return jnp::argmax(a, 0).astype(DType::f32) + jnp::sum(jnp::transpose(b));
      },
      {3, 2}, {2, 3}, 21);
  check_all_axes(
      [](const Array& a, const Array& b) {
        return jnp::concatenate({a.reshape({6}), jnp::broadcast_to(b, {2, 3}).reshape({6})});
      },
      {2, 3}, {3}, 22);
  check_all_axes(
      [](const Array& a, const Array& b) {
        return lax::rev(a[slice(1, 3)], {0}) * jnp::squeeze(jnp::expand_dims(b, {0}), {});
      },
      {4}, {2}, 23);
}

TEST_CASE("per-example gradients: vmap(grad) equals a loop of grads and finite differences") {
  auto loss = [](const Array& w, const Array& b, const Array& x, const Array& y) {
    const Array neg_y = -y;
    return jnp::log(1.0 + jnp::exp(neg_y * (jnp::dot(x, w) + b)));
  };
  std::mt19937 rng(7);
  const Array w = random_f32(rng, {5}), b = random_f32(rng, {}), xs = random_f32(rng, {4, 5});
  const Array ys = jnp::sign(random_f32(rng, {4}));
  auto per_example = vmap(grad(loss, argnums<0, 1>), {none, none, 0, 0});
  auto [dw, db] = per_example(w, b, xs, ys);
  REQUIRE(dw.shape() == Shape{4, 5});
  REQUIRE(db.shape() == Shape{4});
  UseInterpreter interp;
  for (int64_t i = 0; i < 4; ++i) {
    auto [dwi, dbi] = grad(loss, argnums<0, 1>)(w, b, xs[i], ys[i]);
    test::require_close(dw[i].buffer(), dwi.buffer());
    test::require_close(db[i].buffer(), dbi.buffer());
    // d/db by central differences, in f64
    const double h = 1e-4;
    auto at = [&](double db_) {
      return loss(w.astype(DType::f64), b.astype(DType::f64) + db_, xs[i].astype(DType::f64),
                  ys[i].astype(DType::f64))
          .item();
    };
    CHECK(db[i].item() == Approx((at(h) - at(-h)) / (2 * h)).epsilon(1e-3));
  }
}

TEST_CASE("vmap composes: grad of vmap, jit of vmap, nested vmap, vmap of checkpoint") {
  std::mt19937 rng(8);
  const Array x = random_f32(rng, {3, 4}), w = random_f32(rng, {4, 2});
  auto layer = [](const Array& xi, const Array& wi) { return jnp::tanh(jnp::dot(xi, wi)); };
  auto batch_loss = [&](const Array& wi) { return jnp::sum(vmap(layer, {0, none})(x, wi)); };
  Array want_g, want_y;
  {
    UseInterpreter interp;
    want_g = grad([&](const Array& wi) { return jnp::sum(layer(x, wi)); })(w);
    want_y = layer(x, w);
    test::require_close(grad(batch_loss)(w).buffer(), want_g.buffer());
    // Nested: out[j][i] = u[i] * v[j].
    const Array u = x[0], v = x[1][slice(0, 3)];
    auto mul = [](const Array& p, const Array& q) { return p * q; };
    test::require_close(vmap(vmap(mul, {0, none}), {none, 0})(u, v).buffer(),
                        (jnp::expand_dims(v, {1}) * jnp::expand_dims(u, {0})).buffer());
  }
  test::require_close(grad(batch_loss)(w).buffer(), want_g.buffer());  // compiled
  test::require_close(jit(vmap(layer, {0, none}))(x, w).buffer(), want_y.buffer());
  auto saved = checkpoint(layer, policies::dots_with_no_batch_dims_saveable());
  test::require_close(vmap(saved, {0, none})(x, w).buffer(), want_y.buffer());
  test::require_close(grad([&](const Array& wi) {
                        return jnp::sum(vmap(saved, {0, none})(x, wi));
                      })(w)
                          .buffer(),
                      want_g.buffer());
}

TEST_CASE("vmap of scan equals a loop: batched carry, batched xs, or both") {
  // carry c -> c * x + 1, ys sin(c): a carry that becomes batched through a batched x too.
  auto f = [](const Array& c0, const Array& xs) {
    auto [c, ys] = scan(
        [](const Array& c, const Array& x) {
          return std::pair{c * x + 1.0, jnp::sin(c)};
        },
        c0, xs);
    return c + jnp::sum(ys);
  };
  check_all_axes(f, {2}, {5, 2}, 30);
  check_all_axes(f, {}, {4}, 31);
}

TEST_CASE("vmap of cond equals a loop: batched predicate (both branches), unbatched predicate") {
  auto f = [](const Array& p, const Array& a) {
    return cond(
        p > 0.0, [](const Array& x) { return jnp::sin(x) * 3.0; },
        [](const Array& x) { return jnp::cos(x); }, a);
  };
  check_all_axes(f, {}, {2}, 40);
  check_all_axes(f, {}, {}, 41);
}

TEST_CASE("jacrev and hessian (vmaps of vjp and jvp) compute JAX's values, compiled too") {
  const Array x = testing::f64({0.5, -1.25, 2.0}, {3}).astype(DType::f32);
  auto f = [](const Array& a) {
    const Array s = jnp::sin(a);
    return s * lax::rev(a, {0});
  };
  auto g = [](const Array& a) { return jnp::sum(jnp::sin(a) * a); };
  auto check = [](const Array& got, const std::string& title) {
    const std::vector<double> want = golden::numbers(golden::jax_case("vmap.md", title));
    const std::vector<double> values = got.buffer().to_doubles();
    REQUIRE(values.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(values[i] == Approx(want[i]).margin(1e-6));
  };
  check(jacrev(f)(x), "jacrev values");
  check(jacfwd(f)(x), "jacrev values");
  check(hessian(g)(x), "hessian values");
  UseInterpreter interp;
  check(jacrev(f)(x), "jacrev values");
  check(hessian(g)(x), "hessian values");
}

TEST_CASE("vmap of while equals a loop: a batched predicate runs until every example is done") {
  // Doubling until the sum passes a bound: each example stops after its own number of steps.
  auto f = [](const Array& x, const Array& bound) {
    return while_loop([&](const Array& c) { return jnp::sum(c) < bound; },
                      [](const Array& c) { return c * 2.0 + 0.5; }, x);
  };
  std::mt19937 rng(50);
  const Array xs = jnp::abs(random_f32(rng, {4, 3})) + 0.1;
  const Array bounds = testing::f64({1.0, 10.0, 100.0, 3.0}, {4}).astype(DType::f32);
  check_against_loop(f, xs, bounds, {0, 0}, 4);        // batched predicate
  check_against_loop(f, xs, bounds[1], {0, none}, 4);  // batched through the carry
  check_against_loop(f, xs[0], bounds, {none, 0}, 4);  // batched through a const
  // fori_loop with traced bounds is a while over (i, upper, value), as JAX's.
  auto g = [](const Array& n, const Array& x) {
    return fori_loop(
        Array::scalar(0.0, DType::i32), n, [](const Array&, const Array& c) { return c * 2.0; }, x);
  };
  const Array ns = testing::f64({1, 2, 3, 0}, {4}).astype(DType::i32);
  check_against_loop(g, ns, xs, {0, 0}, 4);
}

TEST_CASE("vmap of dynamic_slice and dynamic_update_slice equals a loop (a scan over the batch)") {
  auto window = [](const Array& x, const Array& i) {
    const Array start[] = {i.astype(DType::i32)};
    return lax::dynamic_slice(x, start, {2});
  };
  auto write = [](const Array& x, const Array& i) {
    return bind1("dynamic_update_slice", {x, jnp::ones({2}), i.astype(DType::i32)}, Params{},
                 std::source_location::current());
  };
  std::mt19937 rng(60);
  const Array xs = random_f32(rng, {3, 5});
  const Array starts = testing::f64({0, 3, 1}, {3}).astype(DType::f32);
  for (const Fn& f : {Fn(window), Fn(write)}) {
    check_against_loop(f, xs, starts, {0, 0}, 3);
    check_against_loop(f, xs, starts[1], {0, none}, 3);
    check_against_loop(f, xs[0], starts, {none, 0}, 3);
  }
  // ... and differentiates: per-example gradients through a window.
  auto loss = [&](const Array& x, const Array& i) { return jnp::sum(jnp::sin(window(x, i))); };
  Array want;
  {
    UseInterpreter interp;
    std::vector<Array> rows;
    for (int64_t k = 0; k < 3; ++k) rows.push_back(grad(loss)(xs[k], starts[k]));
    want = jnp::stack(rows);
  }
  test::require_close(vmap(grad(loss))(xs, starts).buffer(), want.buffer());
}

TEST_CASE("vmap out_axes and axis_size place and broadcast the outputs") {
  std::mt19937 rng(9);
  const Array x = random_f32(rng, {3, 2});
  auto f = [](const Array& a) { return jnp::sin(a); };
  UseInterpreter interp;
  test::require_close(vmap(f, 0, 1)(x).buffer(), jnp::transpose(jnp::sin(x)).buffer());
  test::require_close(vmap(f, 0, -1)(x).buffer(), jnp::transpose(jnp::sin(x)).buffer());
  const Array c = vmap([](const Array& a) { return a * 2.0; }, none, 0, none, 4)(x[0]);
  REQUIRE(c.shape() == Shape{4, 2});
  test::require_close(c[3].buffer(), (x[0] * 2.0).buffer());
}

TEST_CASE("vmap's errors name the arguments, the axes and the primitive") {
  const Array a = jnp::ones({2}), b = jnp::ones({3});
  auto add = [](const Array& x, const Array& y) { return x + y; };
  CHECK_THROWS_WITH(vmap(add)(a, b),
                    "vmap got inconsistent sizes for array axes to be mapped:\n"
                    "  * one axis had size 2: axis 0 of args[0] of type f32[2];\n"
                    "  * one axis had size 3: axis 0 of args[1] of type f32[3]");
  CHECK_THROWS_WITH(vmap(add, 1)(a, a),
                    "vmap was requested to map its argument along axis 1, which implies that its "
                    "rank should be at least 2, but is only 1 (its shape is (2,))");
  CHECK_THROWS_WITH(vmap(add, {0})(a, a), Catch::Contains("len(in_axes)=1, len(args)=2"));
  CHECK_THROWS_WITH(vmap([](const Array& x) { return x; }, 0, std::nullopt)(a),
                    Catch::Contains("vmap has mapped output but out_axes is None"));
  CHECK_THROWS_WITH(vmap([](const Array& x) { return x; }, std::nullopt)(a),
                    Catch::Contains("at least one non-None value in in_axes"));
  // A primitive cjax does not know (read from text) has no batching rule.
  const JaxprRef opaque =
      parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = mystery_op[k=1] a in (b,) }");
  const BatchDim batched[] = {0};
  CHECK_THROWS_WITH(batch_jaxpr(*opaque, batched, BatchAxis{2, ""}),
                    Catch::Contains("vmap: no batching rule for 'mystery_op' (batch_jaxpr)"));
}

}  // namespace
}  // namespace cjax
