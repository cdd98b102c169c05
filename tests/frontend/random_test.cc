// cjax::random against JAX: the threefry hash against Random123's known answers, keys, splits,
// fold_ins, bits, uniform and normal against the values jax 0.11.2 computed in both of its
// threefry modes (tests/golden/jax_0_11_2/random_bits.json), and the jaxprs against its
// printouts (random.md); the random primitives' text parses back.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "runtime/threefry.h"
#include "tests/frontend/random_values.h"
#include "tests/golden/golden.h"

namespace cjax {
namespace random_test {

namespace jnp = cjax::numpy;
using namespace random_values;

TEST_CASE("threefry2x32 matches Random123's known answers") {
  // Random123's kat_vectors for threefry2x32_20 (also what JAX's threefry_2x32 gives).
  uint32_t x0 = 0x243F6A88, x1 = 0x85A308D3;
  runtime::threefry2x32(0x13198A2E, 0x03707344, x0, x1);
  CHECK(x0 == 0xC4923A9C);
  CHECK(x1 == 0x483DF7A0);
  for (const std::string mode : {"partitionable", "classic"}) {
    uint32_t a = 0, b = 0;
    runtime::threefry2x32(0, 0, a, b);
    CHECK(std::vector<uint32_t>{a, b} == jax_words(mode, "threefry_2x32 key (0,0) count (0,0)"));
    uint32_t c = 0xFFFFFFFF, d = 0xFFFFFFFF;
    runtime::threefry2x32(0xFFFFFFFF, 0xFFFFFFFF, c, d);
    CHECK(std::vector<uint32_t>{c, d} ==
          jax_words(mode, "threefry_2x32 key (ffffffff,ffffffff) count (ffffffff,ffffffff)"));
    // JAX's threefry_2x32 over four counters: the halves hashed pairwise.
    std::vector<uint32_t> counts{0, 1, 2, 3}, out(4);
    runtime::threefry_2x32(0x13198A2E, 0x03707344, counts, out);
    CHECK(out == jax_words(mode, "threefry_2x32 key (0x13198a2e,0x03707344) counts 0..3"));
  }
}

TEST_CASE("keys, split, fold_in and bits are JAX's, bit for bit, in both threefry modes") {
  for (const bool partitionable : {true, false}) {
    ModeScope mode(partitionable);
    const std::string m = partitionable ? "partitionable" : "classic";
    INFO(m);
    const Array k0 = random::key(0), k42 = random::key(42);
    CHECK(words(random::PRNGKey(0)) == jax_words(m, "PRNGKey(0)"));
    CHECK(words(random::PRNGKey(42)) == jax_words(m, "PRNGKey(42)"));
    CHECK(words(random::PRNGKey(-1)) == jax_words(m, "PRNGKey(-1)"));
    CHECK(words(random::key_data(k0)) == jax_words(m, "key_data(key(0))"));
    CHECK(words(random::key_data(random::split(k0))) == jax_words(m, "split(key(0))"));
    CHECK(words(random::key_data(random::split(k0, 4))) == jax_words(m, "split(key(0), 4)"));
    CHECK(words(random::key_data(random::split(k42, Shape{2, 3}))) ==
          jax_words(m, "split(key(42), (2,3))"));
    const Array raw = random::split(random::PRNGKey(0));
    CHECK(raw.dtype() == DType::u32);
    CHECK(words(raw) == jax_words(m, "split(PRNGKey(0))"));
    CHECK(words(random::key_data(random::fold_in(k0, 1))) == jax_words(m, "fold_in(key(0), 1)"));
    CHECK(words(random::key_data(random::fold_in(k42, 12345))) ==
          jax_words(m, "fold_in(key(42), 12345)"));
    std::vector<uint32_t> folds;
    for (int i = 0; i < 4; ++i)
      for (uint32_t w : words(random::key_data(random::fold_in(k0, i)))) folds.push_back(w);
    CHECK(folds == jax_words(m, "fold_in(key(0), i) for i in 0..3"));
    CHECK(words(random::bits(k0, {8})) == jax_words(m, "bits(key(0), (8,))"));
    CHECK(words(random::bits(k0, {3})) == jax_words(m, "bits(key(0), (3,))"));
    CHECK(words(random::bits(k42, {2, 5})) == jax_words(m, "bits(key(42), (2,5))"));
    CHECK(words(random::bits(k0, {4}, DType::u8)) == jax_words(m, "bits(key(0), (4,), uint8)"));
    CHECK(words(random::bits(k0, {4}, DType::u16)) == jax_words(m, "bits(key(0), (4,), uint16)"));
    CHECK(random::bits(k0, {0}).size() == 0);
    CHECK(random::split(k0, 0).size() == 0);
  }
}

TEST_CASE("uniform and normal are JAX's samples in both modes") {
  for (const bool partitionable : {true, false}) {
    ModeScope mode(partitionable);
    const std::string m = partitionable ? "partitionable" : "classic";
    INFO(m);
    const Array k0 = random::key(0), k42 = random::key(42);
    // uniform is exact arithmetic on the bits: equal to the last bit.
    CHECK(words(random::uniform(k0, {8})) == jax_words(m, "uniform(key(0), (8,))"));
    // Scaled to [-2, 5): XLA fuses floats * 7 - 2 into one fma, the interpreter rounds twice,
    // so within one ulp.
    const std::vector<uint32_t> scaled = words(random::uniform(k42, {3}, DType::f32, -2.0, 5.0));
    const std::vector<uint32_t> want = jax_words(m, "uniform(key(42), (3,), minval=-2, maxval=5)");
    REQUIRE(scaled.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(std::abs(int64_t(scaled[i]) - int64_t(want[i])) <= 1);
    // normal goes through erf_inv: within a few ulps.
    for (const auto& [got, name] :
         {std::pair{random::normal(k0, {8}), "normal(key(0), (8,))"},
          std::pair{random::normal(k42, {2, 3}), "normal(key(42), (2,3))"}}) {
      const std::vector<uint32_t> want = jax_words(m, name), have = words(got);
      REQUIRE(have.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i)
        CHECK(as_float(have[i]) == Approx(as_float(want[i])).epsilon(2e-6).margin(1e-7));
    }
  }
}

TEST_CASE("random functions trace to JAX's primitives, printed as JAX prints them") {
  ModeScope mode(true);
  auto jax = [](const std::string& title) {
    return golden::jax_case("random.md", "[partitionable] " + title);
  };
  const ShapeDtype seed{DType::i32, {}}, key{DType::key_fry, {}};
  auto print = [](auto f, const ShapeDtype& in) { return to_string(make_jaxpr(f)(in)); };
  CHECK(print([](const Array& s) { return random::key(s); }, seed) == jax("key jaxpr"));
  CHECK(print([](const Array& s) { return random::PRNGKey(s); }, seed) == jax("PRNGKey jaxpr"));
  CHECK(print([](const Array& k) { return random::split(k, 3); }, key) == jax("split jaxpr"));
  CHECK(print([](const Array& k) { return random::fold_in(k, 7); }, key) == jax("fold_in jaxpr"));
  CHECK(print([](const Array& k) { return random::bits(k, {5}); }, key) == jax("bits jaxpr"));
  CHECK(print([](const Array& k) { return random::uniform(k, {5}); }, key) == jax("uniform jaxpr"));
  CHECK(print([](const Array& k) { return random::normal(k, {5}); }, key) == jax("normal jaxpr"));
  CHECK(print([](const Array& k) { return random::split(k); }, ShapeDtype{DType::u32, {2}}) ==
        jax("raw PRNGKey split jaxpr"));
  CHECK(print(
            [](const Array& k) {
              return random::wrap_key_data(
                  lax::bitwise_xor(random::key_data(k), lax::convert_element_type(1, DType::u32)));
            },
            key) == jax("key_data/wrap_key_data jaxpr"));
}

TEST_CASE("random jaxprs parse, re-print and run") {
  ModeScope mode(true);
  for (const char* title : {"split jaxpr", "fold_in jaxpr", "bits jaxpr", "uniform jaxpr",
                            "raw PRNGKey split jaxpr", "key_data/wrap_key_data jaxpr"}) {
    INFO(title);
    const std::string text = golden::jax_case("random.md", std::string("[partitionable] ") + title);
    CHECK(to_string(*parse_jaxpr(text)) == text);
  }
  // split, read back from JAX's text, runs to JAX's keys.
  const Jaxpr split =
      *parse_jaxpr(golden::jax_case("random.md", "[partitionable] raw PRNGKey split jaxpr"));
  const std::vector<runtime::Buffer> out =
      runtime::eval_jaxpr(split, std::vector<runtime::Buffer>{random::PRNGKey(0).buffer()});
  CHECK(words(Array::from_buffer(out.at(0))) == jax_words("partitionable", "split(PRNGKey(0))"));
}

TEST_CASE("random: bad keys and arguments are clear errors") {
  CHECK_THROWS_WITH(random::split(jnp::ones({3})),
                    Catch::Contains("split: expected a PRNG key array"));
  CHECK_THROWS_WITH(
      random::split(random::split(random::key(0))),
      Catch::Contains("split accepts a single key, but was given a key array of shape (2,)"));
  CHECK_THROWS_WITH(random::bits(random::key(0), {2}, DType::i32),
                    Catch::Contains("must be an unsigned int dtype"));
  CHECK_THROWS_WITH(random::uniform(random::key(0), {2}, DType::i32),
                    Catch::Contains("uniform only accepts floating point dtypes"));
  CHECK_THROWS_WITH(random::key(0.5), Catch::Contains("the seed must be an integer scalar"));
  // Keys are not numbers.
  CHECK_THROWS(random::key(0) + 1);
}

TEST_CASE("grad flows through a sample's scale and bounds, not through the key") {
  const Array k = random::key(3);
  const Array z = random::normal(k, {6});
  const Array g =
      grad([&](const Array& s) { return jnp::sum(random::normal(k, {6}) * s); })(Array(2.0f));
  CHECK(g.item() == Approx(jnp::sum(z).item()).epsilon(1e-6));
  // d/dmaxval of sum(uniform(k, minval=0, maxval)) is the sum of the unit samples.
  const Array u = random::uniform(k, {5});
  const Array gm = grad([&](const Array& hi) {
    return jnp::sum(random::uniform(k, {5}, DType::f32, 0.0f, hi));
  })(Array(3.0f));
  CHECK(gm.item() == Approx(jnp::sum(u).item()).epsilon(1e-6));
}

}  // namespace random_test
}  // namespace cjax
