// models/gpt: the loss starts at ln(vocab), the gradient matches central differences, every
// checkpoint policy gives the un-checkpointed gradient (dropout masks recomputed, not saved), the
// compiled training step agrees with the interpreter's, and a checkpoint reloads to the same run.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "compiler/cpu/cpu_backend.h"
#include "io/npz.h"
#include "models/gpt/model.h"
#include "models/gpt/text.h"
#include "models/gpt/train.h"
#include "passes/memory/memory_model.h"
#include "tests/frontend/compiler_test_util.h"
#include "tests/memory/measure.h"

namespace gpt_test {

using namespace cjax;
using namespace cjax::models::gpt;

GptConfig tiny(std::string policy = "none", double dropout = 0.0) {
  GptConfig c;
  c.vocab = 13;
  c.d_model = 8;
  c.heads = 2;
  c.seq = 6;
  c.layers = 2;
  c.dropout = dropout;
  c.policy = std::move(policy);
  return c;
}

std::pair<Array, Array> batch(const GptConfig& c, uint64_t seed) {
  std::vector<int32_t> ids;
  SplitMix64 gen(seed);
  for (int i = 0; i < 64; ++i) ids.push_back(int32_t(gen.next() % uint64_t(c.vocab)));
  SplitMix64 rng(seed + 1);
  return sample_batch(ids, 3, c.seq, rng);
}

// Leaves of two parameter trees agree within a relative tolerance.
void require_close(const GptParams& a, const GptParams& b, double rtol, double atol) {
  FlatTree fa = tree_flatten(a), fb = tree_flatten(b);
  REQUIRE(fa.leaves.size() == fb.leaves.size());
  for (size_t i = 0; i < fa.leaves.size(); ++i) {
    INFO(keystr(fa.paths[i]));
    auto x = fa.leaves[i].to_vector<double>(), y = fb.leaves[i].to_vector<double>();
    REQUIRE(x.size() == y.size());
    for (size_t k = 0; k < x.size(); ++k)
      REQUIRE(std::abs(x[k] - y[k]) <= atol + rtol * std::abs(y[k]));
  }
}

GptParams gradient(const GptConfig& c, const GptParams& p, const Array& x, const Array& y,
                   const Array& key) {
  return grad(training_loss(c))(p, x, y, key);
}

TEST_CASE("gpt: the untrained loss is ln(vocab) and logits have the model's shape") {
  UseInterpreter interp;
  const GptConfig c = tiny();
  const GptParams p = init_gpt(c, random::PRNGKey(0));
  auto [x, y] = batch(c, 1);
  CHECK(gpt_logits(c, p, x, random::PRNGKey(1), false).shape() == Shape{3, c.seq, c.vocab});
  CHECK(gpt_loss(c, p, x, y, random::PRNGKey(1)).item<double>() ==
        Approx(std::log(double(c.vocab))).margin(0.05));
  CHECK(parameter_count(p) ==
        13 * 8 + 6 * 8 + 2 * (4 * 8 + 8 * 24 + 24 + 8 * 8 + 8 + 8 * 32 + 32 + 32 * 8 + 8) + 2 * 8);
}

// In f64 (attention still takes its softmax in f32, as JAX does), so that the differences
// measure the derivative rather than rounding.
TEST_CASE("gpt: the gradient matches central differences along random directions") {
  UseInterpreter interp;
  const GptConfig c = tiny("dots_with_no_batch_dims_saveable");
  const GptParams p = tree_map([](const Array& w) { return numpy::astype(w, DType::f64); },
                               init_gpt(c, random::PRNGKey(2)));
  auto [x, y] = batch(c, 3);
  const Array key = random::PRNGKey(4);
  const GptParams g = gradient(c, p, x, y, key);
  REQUIRE(g.wte.dtype() == DType::f64);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Array> dirs;  // every weight moves
    for (const Array& leaf : tree_leaves(p)) dirs.push_back(testing::random_f64(rng, leaf.shape()));
    const GptParams d = tree_unflatten(p, dirs);
    const double h = 1e-5;
    auto at = [&](double t) {
      GptParams q = tree_map([t](const Array& w, const Array& v) { return w + v * t; }, p, d);
      return gpt_loss(c, q, x, y, key).item<double>();
    };
    const double numeric = (at(h) - at(-h)) / (2 * h);
    double analytic = 0;
    auto gl = tree_leaves(g), dl = tree_leaves(d);
    for (size_t i = 0; i < gl.size(); ++i) {
      auto a = gl[i].to_vector<double>(), b = dl[i].to_vector<double>();
      for (size_t k = 0; k < a.size(); ++k) analytic += a[k] * b[k];
    }
    INFO("trial " << trial);
    CHECK(analytic == Approx(numeric).epsilon(2e-4).margin(1e-7));
  }
}

TEST_CASE("gpt: every checkpoint policy gives the un-checkpointed gradient, dropout included") {
  UseInterpreter interp;
  auto [x, y] = batch(tiny(), 6);
  const Array key = random::PRNGKey(7);
  for (double dropout : {0.0, 0.3}) {
    const GptParams p = init_gpt(tiny(), random::PRNGKey(8));
    const GptParams reference = gradient(tiny("none", dropout), p, x, y, key);
    for (const char* policy : {"everything_saveable", "nothing_saveable", "dots_saveable",
                               "dots_with_no_batch_dims_saveable"}) {
      INFO(policy << ", dropout " << dropout);
      require_close(gradient(tiny(policy, dropout), p, x, y, key), reference, 1e-6, 1e-9);
    }
  }
}

TEST_CASE("gpt: dropout draws from its key, evaluation draws nothing") {
  UseInterpreter interp;
  const GptConfig c = tiny("nothing_saveable", 0.5);
  const GptParams p = init_gpt(c, random::PRNGKey(9));
  auto [x, y] = batch(c, 10);
  const double a = gpt_loss(c, p, x, y, random::PRNGKey(1)).item<double>();
  CHECK(a == gpt_loss(c, p, x, y, random::PRNGKey(1)).item<double>());
  CHECK(a != gpt_loss(c, p, x, y, random::PRNGKey(2)).item<double>());
  CHECK(gpt_loss(c, p, x, y, random::PRNGKey(1), false).item<double>() ==
        gpt_loss(c, p, x, y, random::PRNGKey(2), false).item<double>());
}

TEST_CASE("gpt: compiled training steps agree with the interpreter's") {
  const GptConfig c = tiny("dots_with_no_batch_dims_saveable", 0.1);
  TrainOptions o;
  o.steps = 10;
  o.warmup_steps = 2;
  const auto opt = make_optimizer(o);
  TrainState compiled = init_train_state(c, opt, random::PRNGKey(11));
  TrainState interpreted = init_train_state(c, opt, random::PRNGKey(11));
  const StepFn step = make_train_step(c, opt);
  for (int i = 0; i < 4; ++i) {
    auto [x, y] = batch(c, 20 + uint64_t(i));
    const Array key = random::PRNGKey(30 + i);
    const float lc = train_step(step, compiled, x, y, key);
    float li;
    {
      UseInterpreter interp;
      li = train_step(step, interpreted, x, y, key);
    }
    INFO("step " << i);
    CHECK(lc == Approx(li).epsilon(1e-5));
  }
  require_close(compiled.params, interpreted.params, 1e-4, 1e-6);
}

TEST_CASE("gpt: a checkpointed step's compiled peak stays within the memory model's") {
  // Compiled code frees a buffer after its last reader, as the interpreter (and so the model)
  // does; when it freed a function's or loop body's buffers at their end, the recomputed layer
  // of the backward pass held every intermediate at once, 1.8x the model's peak at the issue's
  // size.
  GptConfig c;
  c.d_model = 64;
  c.seq = 32;
  c.layers = 2;
  c.policy = "nothing_saveable";
  const GptParams p = init_gpt(c, random::PRNGKey(3));
  const Array tokens = numpy::zeros({8, c.seq}, DType::i32);
  const Jaxpr j = make_jaxpr(training_loss(c))(p, tokens, tokens, random::PRNGKey(4));
  const VjpResult r = vjp_jaxpr(j);
  const memory::StepModel m = memory::model_step(r.fwd, r.bwd, r.num_residuals);
  const size_t compiled = memory::testing::measured_compiled_peak(r.fwd, r.bwd, r.num_residuals);
  INFO("compiled " << compiled << " bytes, model " << m.peak_bytes);
  CHECK(compiled <= m.peak_bytes);
}

TEST_CASE("gpt: a checkpoint reloads to the same run, a wrong one is refused by name") {
  UseInterpreter interp;
  const GptConfig c = tiny();
  TrainOptions o;
  o.steps = 5;
  const auto opt = make_optimizer(o);
  const StepFn step = make_train_step(c, opt);
  TrainState s = init_train_state(c, opt, random::PRNGKey(12));
  auto [x, y] = batch(c, 13);
  train_step(step, s, x, y, random::PRNGKey(0));
  train_step(step, s, x, y, random::PRNGKey(0));
  const auto path = (std::filesystem::temp_directory_path() /
                     ("cjax_gpt_ckpt_" + std::to_string(getpid()) + ".npz"))
                        .string();
  save_checkpoint(path, s);
  const TrainState fresh = init_train_state(c, opt, random::PRNGKey(99));
  TrainState loaded = load_checkpoint(path, fresh);
  CHECK(loaded.step == 2);
  require_close(loaded.params, s.params, 0, 0);
  const float a = train_step(step, s, x, y, random::PRNGKey(0));
  const float b = train_step(step, loaded, x, y, random::PRNGKey(0));
  CHECK(a == b);
  require_close(loaded.params, s.params, 0, 0);

  GptConfig wider = c;
  wider.d_model = 12;
  const TrainState other = init_train_state(wider, opt, random::PRNGKey(0));
  CHECK_THROWS_WITH(load_checkpoint(path, other),
                    Catch::Contains("'params.wte' is f32[13,8] in the checkpoint, but this model "
                                    "needs f32[13,12]"));
  io::NamedBuffers arrays = io::load_npz(path);
  arrays.pop_back();  // drop "step"
  io::save_npz(path, arrays);
  CHECK_THROWS_WITH(load_checkpoint(path, fresh), Catch::Contains("no integer scalar 'step'"));
  std::filesystem::remove(path);
}

TEST_CASE("gpt: the generated text is deterministic and encodes to 96 ids") {
  const std::string a = generate_text(5000, 1), b = generate_text(5000, 1);
  CHECK(a == b);
  CHECK(a != generate_text(5000, 2));
  CHECK(a.size() >= 5000);
  const std::vector<int32_t> ids = encode(a);
  CHECK(decode(ids) == a);
  for (int32_t id : ids) REQUIRE((id >= 0 && id < kCharVocab));
  CHECK_THROWS_WITH(encode("ab\tc"), Catch::Contains("byte 9 at offset 2"));
  GptConfig bad = tiny();
  bad.heads = 3;
  CHECK_THROWS_WITH(bad.check(), Catch::Contains("d_model 8 is not a multiple of heads 3"));
  bad = tiny("no_such_policy");
  CHECK_THROWS(bad.check());
}

}  // namespace gpt_test
