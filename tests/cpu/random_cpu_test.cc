// cjax::random on the compiled back end: a jitted program that draws samples runs, with the
// interpreter's (JAX's) values; the random primitives are not lowered natively yet, so such a
// program runs on the interpreter (CJAX_LOG_COMPILES says so).
#include <catch2/catch.hpp>

#include "cjax/api.h"
#include "cjax/cjax.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace random_cpu_test {

TEST_CASE("jit of a program that draws samples runs, with JAX's values") {
  auto f = [](const Array& k) {
    auto ks = random::split(k);
    return random::uniform(ks[0], {4}) * 2.0f + random::normal(ks[1], {4});
  };
  const Array k = random::key(0);
  Array want;
  {
    UseInterpreter interp;
    want = f(k);
  }
  test::require_close(jit(f)(k).buffer(), want.buffer());
  // A raw key, and grad through a jitted sample's scale.
  test::require_close(
      jit([](const Array& raw) { return random::bits(raw, {3}); })(random::PRNGKey(0)).buffer(),
      random::bits(random::key(0), {3}).buffer());
  const Array g = jit(grad([&](const Array& s) { return numpy::sum(random::normal(k, {5}) * s); }))(
      Array(1.0f));
  CHECK(g.item() == Approx(numpy::sum(random::normal(k, {5})).item()).epsilon(1e-6));
}

}  // namespace random_cpu_test
}  // namespace cjax
