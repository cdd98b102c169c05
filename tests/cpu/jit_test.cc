// The CPU back end as the default evaluator: jit, grad and value_and_grad on concrete arrays run
// compiled code (compiled once per program) and agree with the interpreter.
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "cjax/derivative_cache.h"
#include "compiler/cpu/cpu_backend.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

namespace jnp = cjax::numpy;

Array mlp_loss(const Array& w1, const Array& w2, const Array& x) {
  Array h = jnp::tanh(jnp::dot(x, w1));
  return jnp::mean(jnp::square(jnp::dot(h, w2)));
}

Array filled(Shape shape, double start) {
  ShapedArray a(DType::f32, shape);
  std::vector<float> v(static_cast<size_t>(a.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(start + 0.01 * double(i % 17));
  return Array::from_buffer(runtime::Buffer::from_data<float>(a, v));
}

TEST_CASE("including the back end's header installs it") {
  REQUIRE(dynamic_cast<CpuBackend*>(current_backend().get()) != nullptr);
  {
    UseInterpreter interp;
    CHECK(current_backend() == nullptr);
  }
  CHECK(current_backend() != nullptr);
}

TEST_CASE("value_and_grad on concrete arrays runs compiled and equals the interpreter") {
  Array w1 = filled({8, 16}, -0.05), w2 = filled({16, 4}, 0.02), x = filled({3, 8}, 0.1);
  auto vg = value_and_grad(mlp_loss, argnums<0, 1>);
  auto* cpu = dynamic_cast<CpuBackend*>(current_backend().get());
  const size_t before = cpu->compiled_programs();
  auto [loss, grads] = vg(w1, w2, x);
  const size_t after_first = cpu->compiled_programs();
  CHECK(after_first > before);  // the forward and backward programs were compiled
  auto again = vg(w1, w2, x);
  CHECK(cpu->compiled_programs() == after_first);  // and reused on the second call
  UseInterpreter interp;
  auto [loss_i, grads_i] = vg(w1, w2, x);
  test::require_close(loss.buffer(), loss_i.buffer());
  test::require_close(std::get<0>(grads).buffer(), std::get<0>(grads_i).buffer());
  test::require_close(std::get<1>(grads).buffer(), std::get<1>(grads_i).buffer());
  test::require_close(std::get<0>(std::get<1>(again)).buffer(), std::get<0>(grads_i).buffer());
}

TEST_CASE("jit runs compiled, composes with grad, and captured arrays never go stale") {
  Array scale = filled({4}, 1.0);
  auto f = [&](const Array& x) { return jnp::sum(jnp::sin(x) * scale); };
  auto jf = jit(f);
  Array x = filled({4}, 0.3);
  Array y = jf(x);
  Array g = jit(grad(f))(x);
  UseInterpreter interp;
  test::require_close(y.buffer(), f(x).buffer());
  test::require_close(g.buffer(), grad(f)(x).buffer());
}

TEST_CASE("a captured array with new values gives new results from the cached program") {
  Array w = filled({3}, 0.5);
  auto f = [&](const Array& x) { return jnp::sum(x * w); };
  Array x = filled({3}, 1.0);
  const double first = jit(f)(x).item();
  w = filled({3}, 2.5);  // same type, other values: the same compiled program, new argument
  const double second = jit(f)(x).item();
  CHECK(second != Approx(first));
  UseInterpreter interp;
  CHECK(second == Approx(f(x).item()));
}

TEST_CASE("jit traces once per call signature and runs the compiled program after") {
  int traces = 0;
  auto f = [&traces](const Array& x) {
    ++traces;
    return jnp::sum(jnp::sin(x) * 2.0);
  };
  auto jf = jit(f);
  auto* cpu = dynamic_cast<CpuBackend*>(current_backend().get());
  const Array x = filled({4}, 0.3);
  const Array first = jf(x);
  const size_t compiled = cpu->compiled_programs();
  const Array second = jf(filled({4}, 0.7));  // same signature, other values
  CHECK(traces == 1);
  CHECK(jf.cache_size() == 1);
  CHECK(cpu->compiled_programs() == compiled);
  jf(filled({5}, 0.3));  // another shape
  CHECK(traces == 2);
  ShapedArray f64(DType::f64, {4});
  const std::vector<double> values{0.1, 0.2, 0.3, 0.4};
  jf(Array::from_buffer(runtime::Buffer::from_data<double>(f64, values)));
  CHECK(traces == 3);                  // another dtype
  jf(Array::scalar(0.5, DType::f32));  // a strongly typed f32[] ...
  jf(0.5);                             // ... and a C++ number (weak f32[]) are two signatures
  CHECK(traces == 5);
  jf(x);
  CHECK(traces == 5);
  CHECK(jf.cache_size() == 5);
  UseInterpreter interp;  // the cached trace runs on the interpreter too
  test::require_close(first.buffer(), f(x).buffer());
  test::require_close(second.buffer(), f(filled({4}, 0.7)).buffer());
  test::require_close(jf(x).buffer(), first.buffer());
  CHECK(traces == 7);  // (f itself, twice, for the reference values)
}

TEST_CASE("jit retraces for another tree structure") {
  int traces = 0;
  auto total = [&traces](const std::vector<Array>& xs) {
    ++traces;
    Array s = jnp::sum(xs.at(0));
    for (size_t i = 1; i < xs.size(); ++i) s = s + jnp::sum(xs[i]);
    return s;
  };
  auto jt = jit(total);
  const Array a = filled({3}, 0.1), b = filled({3}, 0.2), c = filled({3}, 0.3);
  const double two = jt(std::vector<Array>{a, b}).item();
  const double three = jt(std::vector<Array>{a, b, c}).item();
  jt(std::vector<Array>{b, a});
  CHECK(traces == 2);
  CHECK(three == Approx(two + jnp::sum(c).item()));
}

TEST_CASE("grad on concrete arrays differentiates once per trace, reading captured values afresh") {
  Array w = filled({3}, 0.5);
  auto f = [&](const Array& x) { return jnp::sum(jnp::sin(x * jnp::sum(w))); };
  auto g = grad(f);
  const Array x = filled({3}, 1.0);
  auto expected = [&] {  // d/dx sum(sin(x s)) = s cos(x s), s = sum(w)
    UseInterpreter interp;
    const Array s = jnp::sum(w);
    return s * jnp::cos(x * s);
  };
  test::require_close(g(x).buffer(), expected().buffer());
  test::require_close(g(x).buffer(), expected().buffer());
  CHECK(g.cache_size() == 1);
  w = filled({3}, 2.5);  // the same trace; the captured value is an argument of its program
  test::require_close(g(x).buffer(), expected().buffer());
  CHECK(g.cache_size() == 1);
  g(filled({5}, 1.0));  // another shape, another trace
  CHECK(g.cache_size() == 2);
}

TEST_CASE("vjp, linearize and jvp on concrete arrays differentiate each trace once per process") {
  Array w = filled({3}, 0.5);
  auto f = [&](const Array& x) { return jnp::sin(x * jnp::sum(w)); };
  const Array x = filled({3}, 1.0), ct = filled({3}, 0.3);
  auto expected = [&] {  // (f(x), ct * s cos(x s)), s = sum(w)
    UseInterpreter interp;
    const Array s = jnp::sum(w);
    return std::make_pair(jnp::sin(x * s), ct * s * jnp::cos(x * s));
  };
  auto check_vjp = [&] {
    auto [y, f_vjp] = vjp(f, x);
    auto [dx] = f_vjp(ct);
    auto [want_y, want_dx] = expected();
    test::require_close(y.buffer(), want_y.buffer());
    test::require_close(dx.buffer(), want_dx.buffer());
  };
  detail::clear_derivative_cache();
  const auto start = detail::derivative_cache_stats();
  check_vjp();
  check_vjp();
  w = filled({3}, 2.5);  // new captured values: the same trace, the same backward program
  check_vjp();
  auto after_vjp = detail::derivative_cache_stats();
  CHECK(after_vjp.misses - start.misses == 1);
  CHECK(after_vjp.hits - start.hits == 2);

  // linearize and jvp key their own transformations; a new shape is a new trace.
  for (int i = 0; i < 3; ++i) {
    auto [y, f_jvp] = linearize(f, x);
    auto [y2, t] = jvp(f, x, ct);
    auto [want_y, want_t] = expected();
    test::require_close(f_jvp(ct).buffer(), want_t.buffer());
    test::require_close(t.buffer(), want_t.buffer());
    test::require_close(y2.buffer(), want_y.buffer());
  }
  vjp(f, filled({5}, 1.0));
  const auto end = detail::derivative_cache_stats();
  CHECK(end.misses - after_vjp.misses == 3);  // linearize, jvp, vjp at the new shape
  CHECK(end.hits - after_vjp.hits == 4);
  CHECK(end.entries == 4);
}

TEST_CASE("grad caches programs with policies: one per policy object, always the right one") {
  const PolicyRef kept = policies::save_only_these_names({"none"});
  auto body = [](const Array& y) { return jnp::sin(jnp::sin(y)); };
  auto with_kept = [&](const Array& x) { return jnp::sum(checkpoint(body, kept)(x)); };
  // A new policy object on every call: a new key each time (a different policy could sit at a
  // freed one's address, so keys hold their policies).
  auto with_new = [&](const Array& x) {
    return jnp::sum(checkpoint(body, policies::save_only_these_names({"none"}))(x));
  };
  const Array x = filled({4}, 0.2);
  Array want;
  {
    UseInterpreter interp;
    want = jnp::cos(jnp::sin(x)) * jnp::cos(x);
  }
  auto g_kept = grad(with_kept);
  auto g_new = grad(with_new);
  for (int i = 0; i < 5; ++i) {
    test::require_close(g_kept(x).buffer(), want.buffer());
    test::require_close(g_new(x).buffer(), want.buffer());
  }
  CHECK(g_kept.cache_size() == 1);
  CHECK(g_new.cache_size() == 5);
}

TEST_CASE("jit's donate_argnums consumes the donated arrays, reading one after is an error") {
  auto sgd = [](const Array& w, const Array& g) { return w - 0.1 * g; };
  auto step = jit(sgd, donate_argnums(0));
  Array w = filled({64}, 0.5);
  const Array g = filled({64}, 0.2);
  Array want;
  {
    UseInterpreter interp;
    want = sgd(w, g);
  }
  Array w2 = step(w, g);
  test::require_close(w2.buffer(), want.buffer());
  CHECK(w.is_deleted());
  CHECK_FALSE(g.is_deleted());
  CHECK(w.to_string() == "Array(deleted, f32[64])");
  using Catch::Contains;
  CHECK_THROWS_WITH(w.buffer(), Contains("has been deleted") && Contains("donate_argnums"));
  CHECK_THROWS_WITH(step(w, g), Contains("has been deleted"));
  CHECK_THROWS_WITH(jnp::sum(w), Contains("has been deleted"));
  CHECK_THROWS_WITH(make_jaxpr([&](const Array& x) { return x + w; })(g),
                    Contains("has been deleted"));
  // A training loop: each step's result is the next step's donated weights.
  Array cur = w2;
  for (int i = 0; i < 3; ++i) {
    Array next = step(cur, g);
    CHECK(cur.is_deleted());
    cur = next;
  }
  {
    UseInterpreter interp;  // four steps of w - 0.1 g
    test::require_close(cur.buffer(), (filled({64}, 0.5) - 0.4 * g).buffer());
  }
  const Array a = filled({64}, 1.0);
  CHECK_THROWS_WITH(step(a, a), Contains("donated") && Contains("passed once"));
  CHECK_FALSE(a.is_deleted());
  auto bad = jit(sgd, donate_argnums(2));
  CHECK_THROWS_WITH(bad(a, g), Contains("donate_argnums names argument 2, but the call has 2"));
  CHECK_FALSE(a.is_deleted());
}

TEST_CASE("donation: a returned argument survives, a refused call gives the arrays back") {
  auto identity = jit([](const Array& v) { return v; }, donate_argnums(0));  // no eqns: no code
  const Array v = filled({8}, 1.0);
  const Array r = identity(v);
  CHECK(v.is_deleted());
  REQUIRE_FALSE(r.is_deleted());
  CHECK(r.to_vector<float>() == filled({8}, 1.0).to_vector<float>());
  {
    UseInterpreter interp;  // the interpreter's path
    auto twice = jit(
        [](const Array& a, const Array& b) {
          return std::pair{a * 2.0, b};
        },
        donate_argnums(0, 1));
    const Array a = filled({8}, 1.0), b = filled({8}, 2.0);
    auto [a2, b2] = twice(a, b);
    CHECK(a.is_deleted());
    CHECK(b.is_deleted());
    CHECK(b2.to_vector<float>() == filled({8}, 2.0).to_vector<float>());
    CHECK_THROWS_WITH(twice(a2, a2), Catch::Contains("passed once"));
    CHECK_FALSE(a2.is_deleted());
  }
  // A program refused before it runs (more memory than CJAX_MEMORY_LIMIT) consumes nothing.
  auto big = jit([](const Array& x) { return x * 2.0; }, donate_argnums(0));
  const Array x = jnp::ones({4096, 4096});  // 64 MiB: programs this large are checked
  setenv("CJAX_MEMORY_LIMIT", "1MiB", 1);
  CHECK_THROWS_WITH(big(x), Catch::Contains("CJAX_MEMORY_LIMIT"));
  unsetenv("CJAX_MEMORY_LIMIT");
  REQUIRE_FALSE(x.is_deleted());
  CHECK(jnp::sum(big(x)).item() == Approx(2.0 * 4096 * 4096));
  CHECK(x.is_deleted());
}

TEST_CASE("a donated array is freed once the compiled program has read it, lowering the peak") {
  // Two equal layers, then a wide one: the program compiles as segments (compiler/cpu/segments.h)
  // and each weight is read by its own segment only, so donated weights are gone before the wide
  // layer allocates its output, where the step's peak is.
  auto net = [](const std::vector<Array>& ws, const Array& x) {
    Array h = x;
    for (const Array& w : ws) h = jnp::tanh(jnp::dot(h, w));
    return h;
  };
  auto peak_of = [&](auto& f) {
    std::vector<Array> ws = {filled({256, 256}, 0.01), filled({256, 256}, 0.02),
                             filled({256, 2048}, 0.03)};
    const Array x = filled({64, 256}, 0.1);
    runtime::reset_peak_bytes();
    const size_t before = runtime::memory_stats().live_bytes;
    Array out = f(ws, x);
    return std::pair{runtime::memory_stats().peak_bytes - before, out};  // the call's own peak
  };
  auto plain = jit(net);
  auto donating = jit(net, donate_argnums(0));
  peak_of(plain);  // traced and compiled before the measured calls
  peak_of(donating);
  auto [peak_plain, out_plain] = peak_of(plain);
  auto [peak_donating, out_donating] = peak_of(donating);
  test::require_close(out_donating.buffer(), out_plain.buffer());
  INFO("peak without donation " << peak_plain << ", with " << peak_donating);
  // The first two weights (measured exactly two lower here), less one for slack.
  CHECK(peak_donating + 256 * 256 * 4 <= peak_plain);
}

}  // namespace
}  // namespace cjax
