// shard_map and the collectives on MPI processes: ctest runs this program under
// `mpirun -np 2` and `-np 4` over loopback (tests/CMakeLists.txt). Every process draws the same
// random data, runs the sharded program (interpreted, and compiled through jit), and checks the
// result against the computation it means, done whole in the one process; gradients of
// data-parallel and FSDP programs against the single-process gradient; determinism; and (the
// hidden `[.abort]` case, run separately) a process that never reaches a collective ending the job
// with a message instead of a hang.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <random>

#include "cjax/cjax.h"
#include "models/gpt/sharded.h"
#include "tests/cpu/compare.h"
#include "tests/frontend/compiler_test_util.h"

namespace cjax {
namespace distributed_test {

namespace jnp = cjax::numpy;

int64_t processes() {
  distributed::initialize();
  return distributed::process_count();
}

// The same values on every process.
Array data(const Shape& shape, unsigned seed, DType dtype = DType::f32) {
  std::mt19937 rng(seed);
  return testing::random_f64(rng, shape).astype(dtype);
}

// f(args...) interpreted, then compiled (jit), against `want`.
template <class F, class... A>
void check_both(const Array& want, F f, const A&... args) {
  {
    UseInterpreter interp;
    test::require_close(f(args...).buffer(), want.buffer());
  }
  test::require_close(jit(f)(args...).buffer(), want.buffer());
}

// The 2-D mesh this job makes: (2, n/2) when n is even, else (n, 1).
Mesh mesh_2d(int64_t n) {
  return n % 2 == 0 ? Mesh({2, n / 2}, {"x", "y"}) : Mesh({n, 1}, {"x", "y"});
}

TEST_CASE("each process is one device: axis_index gathered over the mesh counts 0 to n-1") {
  const int64_t n = processes();
  REQUIRE(n >= 2);
  const Mesh mesh({n}, {"x"});
  auto ranks = shard_map([](const Array&) { return lax::all_gather(lax::axis_index("x"), "x"); },
                         mesh, {P()}, {P()});
  check_both(jnp::arange(n).astype(DType::i32), ranks, jnp::zeros({1}));
  CHECK(distributed::process_index() < n);
}

TEST_CASE("psum, pmax, pmin and pmean over a 1-D mesh reduce the blocks") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const Array x = data({n * 3, 2}, 1);
  const Array blocks = x.reshape({n, 3, 2});
  auto over = [&](auto collective) {
    return shard_map([collective](const Array& a) { return collective(a, "x"); }, mesh, {P("x")},
                     {P()});
  };
  auto psum = [](const Array& a, const char* ax) { return lax::psum(a, ax); };
  auto pmax = [](const Array& a, const char* ax) { return lax::pmax(a, ax); };
  auto pmin = [](const Array& a, const char* ax) { return lax::pmin(a, ax); };
  auto pmean = [](const Array& a, const char* ax) { return lax::pmean(a, ax); };
  check_both(jnp::sum(blocks, 0), over(psum), x);
  check_both(jnp::max(blocks, 0), over(pmax), x);
  check_both(jnp::min(blocks, 0), over(pmin), x);
  check_both(jnp::mean(blocks, 0), over(pmean), x);
  // Integers sum exactly.
  const Array k = jnp::arange(n * 4).reshape({n * 4});
  check_both(jnp::sum(k.reshape({n, 4}), 0), over(psum), k);
}

TEST_CASE("axis_index, all_gather and psum_scatter over a 1-D mesh") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const Array x = data({n * 3, 2}, 2);
  auto scaled =
      shard_map([](const Array& a) { return a * lax::axis_index("x"); }, mesh, {P("x")}, {P("x")});
  const Array index = jnp::arange(n).astype(DType::f32).reshape({n, 1, 1});
  check_both((x.reshape({n, 3, 2}) * index).reshape({n * 3, 2}), scaled, x);
  auto stacked =
      shard_map([](const Array& a) { return lax::all_gather(a, "x"); }, mesh, {P("x")}, {P()});
  check_both(x.reshape({n, 3, 2}), stacked, x);
  auto joined = shard_map([](const Array& a) { return lax::all_gather(a, "x", 1, true); }, mesh,
                          {P(std::nullopt, "x")}, {P()});
  const Array wide = data({3, n * 2}, 3);
  check_both(wide, joined, wide);
  // Each process scatters (index + 1) * w: process k keeps block k of the sum, n(n+1)/2 * w.
  const Array w = data({n * 2, 3}, 4);
  auto scattered = shard_map(
      [](const Array& a) {
        return lax::psum_scatter(a * (lax::axis_index("x") + 1), "x", 0, true);
      },
      mesh, {P()}, {P("x")});
  check_both(w * double(n * (n + 1) / 2), scattered, w);
}

TEST_CASE("ppermute and all_to_all move blocks between processes") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const Array x = data({n * 2, 3}, 5);
  std::vector<std::pair<int64_t, int64_t>> ring;
  for (int64_t i = 0; i < n; ++i) ring.emplace_back(i, (i + 1) % n);
  auto shifted = shard_map([&](const Array& a) { return lax::ppermute(a, "x", ring); }, mesh,
                           {P("x")}, {P("x")});
  // Block j receives block j - 1.
  const Array want = jnp::concatenate({x[slice(2 * (n - 1), 2 * n)], x[slice(0, 2 * (n - 1))]}, 0);
  check_both(want, shifted, x);
  // Only 0 -> n-1: that block gets block 0, the rest zeros.
  auto one_pair = shard_map(
      [&](const Array& a) {
        return lax::ppermute(a, "x", {{0, n - 1}});
      },
      mesh, {P("x")}, {P("x")});
  const Array zeros = jnp::zeros({2 * (n - 1), 3}).astype(DType::f32);
  check_both(jnp::concatenate({zeros, x[slice(0, 2)]}, 0), one_pair, x);
  // Block i (shape [n, 3]) sends its row j to process j: out[j * n + i] = x[i * n + j].
  const Array y = data({n * n, 3}, 6);
  auto exchanged = shard_map([](const Array& a) { return lax::all_to_all(a, "x", 0, 0); }, mesh,
                             {P("x")}, {P("x")});
  check_both(jnp::transpose(y.reshape({n, n, 3}), {1, 0, 2}).reshape({n * n, 3}), exchanged, y);
}

TEST_CASE("a 2-D mesh: collectives over one axis, the other, or both") {
  const int64_t n = processes();
  const Mesh mesh = mesh_2d(n);
  const int64_t X = mesh.axes().sizes[0], Y = mesh.axes().sizes[1];
  const Array x = data({X * 2, Y * 3}, 7);
  const Array blocks = jnp::transpose(x.reshape({X, 2, Y, 3}), {0, 2, 1, 3});  // [X, Y, 2, 3]
  auto over = [&](lax::AxisNames names, PartitionSpec out) {
    return shard_map([names](const Array& a) { return lax::psum(a, names); }, mesh, {P("x", "y")},
                     {out});
  };
  check_both(jnp::sum(blocks, 1).reshape({X * 2, 3}), over("y", P("x")), x);
  check_both(jnp::transpose(jnp::sum(blocks, 0), {1, 0, 2}).reshape({2, Y * 3}),
             over("x", P(std::nullopt, "y")), x);
  check_both(jnp::sum(blocks, {0, 1}), over({"x", "y"}, P()), x);
  // A dimension split over both axes, x the major one.
  const Array v = data({n * 2}, 8);
  auto gathered = shard_map(
      [](const Array& a) {
        return lax::all_gather(a, {"x", "y"}, 0, true);
      },
      mesh, {P({"x", "y"})}, {P()});
  check_both(v, gathered, v);
  auto index =
      shard_map([](const Array& a) { return a + lax::axis_index("x") * 10 + lax::axis_index("y"); },
                mesh, {P("x", "y")}, {P("x", "y")});
  const Array offsets = (jnp::arange(X).reshape({X, 1}) * 10 + jnp::arange(Y).reshape({1, Y}))
                            .astype(DType::f32)
                            .reshape({X, 1, Y, 1});
  check_both((x.reshape({X, 2, Y, 3}) + offsets).reshape({X * 2, Y * 3}), index, x);
}

// A small regression: mean squared tanh of a linear map, over a batch.
Array loss(const Array& w, const Array& xs, double total_rows) {
  return jnp::sum(jnp::square(jnp::tanh(jnp::matmul(xs, w)))) / total_rows;
}

TEST_CASE("data-parallel and FSDP gradients equal the single-process gradient") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const double rows = double(n * 4);
  const Array w = data({n * 2, 3}, 9, DType::f64), xs = data({n * 4, n * 2}, 10, DType::f64);
  const Array want = grad([&](const Array& v) { return loss(v, xs, rows); })(w);
  // Data parallel: every process holds w, takes a quarter of the batch, and psums its gradient.
  auto data_parallel = shard_map(
      [rows](const Array& v, const Array& batch) {
        return lax::psum(grad([&](const Array& u) { return loss(u, batch, rows); })(v), "x");
      },
      mesh, {P(), P("x")}, {P()});
  check_both(want, data_parallel, w, xs);
  // FSDP: w's rows sharded too, gathered in the forward; its gradient's transpose is a
  // psum_scatter, so each process gets its rows of the whole batch's gradient.
  auto fsdp = shard_map(
      [rows](const Array& shard, const Array& batch) {
        return grad([&](const Array& s) {
          return loss(lax::all_gather(s, "x", 0, true), batch, rows);
        })(shard);
      },
      mesh, {P("x"), P("x")}, {P("x")});
  check_both(want, fsdp, w, xs);
  // The same bits on every run.
  const Array a = fsdp(w, xs), b = fsdp(w, xs);
  CHECK(std::memcmp(a.buffer().data(), b.buffer().data(), a.buffer().nbytes()) == 0);
}

// grad of a function that calls shard_map (the shard_map eqn's own jvp, partial eval and
// transpose): an output replicated over the mesh shares its cotangent among the devices, an input
// replicated over it sums theirs.
TEST_CASE("grad through a shard_map from outside equals the single-process gradient") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const double rows = double(n * 4);
  const Array w = data({n * 2, 3}, 21, DType::f64), xs = data({n * 4, n * 2}, 22, DType::f64);
  auto whole = [&](const Array& v, const Array& batch) { return loss(v, batch, rows); };
  const Array want_w = grad(whole)(w, xs);
  const Array want_xs = grad(whole, argnums<1>)(w, xs);
  // FSDP: w's rows gathered; the loss summed over the processes, replicated.
  auto fsdp = [&](const Array& v, const Array& batch) {
    return shard_map(
        [rows](const Array& shard, const Array& b) {
          return lax::psum(loss(lax::all_gather(shard, "x", 0, true), b, rows), "x");
        },
        mesh, {P("x"), P("x")}, {P()})(v, batch);
  };
  // Data parallel: w replicated, its gradient the sum of every process's contribution.
  auto data_parallel = [&](const Array& v, const Array& batch) {
    return shard_map(
        [rows](const Array& u, const Array& b) { return lax::psum(loss(u, b, rows), "x"); }, mesh,
        {P(), P("x")}, {P()})(v, batch);
  };
  // Under checkpoint the shard_map is split by the policy: re-gathered, or its dots saved.
  auto regathered = checkpoint(fsdp, policies::by_name("nothing_saveable"));
  auto dots_saved = checkpoint(data_parallel, policies::by_name("dots_saveable"));
  using Fn = std::function<Array(const Array&, const Array&)>;
  for (const Fn& f : {Fn(fsdp), Fn(data_parallel), Fn(regathered), Fn(dots_saved)}) {
    check_both(want_w, grad(f), w, xs);
    check_both(want_xs, grad(f, argnums<1>), w, xs);
    auto [value, g] = value_and_grad(f)(w, xs);
    test::require_close(value.buffer(), whole(w, xs).buffer());
    test::require_close(g.buffer(), want_w.buffer());
  }
}

// vmap of a function that calls shard_map: the batch axis stays whole on every process.
TEST_CASE("vmap through a shard_map equals the single-process loop") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const double rows = double(n * 4);
  const Array ws = data({3, n * 2, 3}, 23, DType::f64), xs = data({n * 4, n * 2}, 24, DType::f64);
  auto fsdp = [&](const Array& v, const Array& batch) {
    return shard_map(
        [rows](const Array& shard, const Array& b) {
          return lax::psum(loss(lax::all_gather(shard, "x", 0, true), b, rows), "x");
        },
        mesh, {P("x"), P("x")}, {P()})(v, batch);
  };
  std::vector<Array> each;
  for (int64_t i = 0; i < 3; ++i) each.push_back(loss(ws[i], xs, rows));
  check_both(jnp::stack(each), vmap(fsdp, {0, std::nullopt}), ws, xs);
  // and its gradient per batch member
  std::vector<Array> grads;
  for (int64_t i = 0; i < 3; ++i)
    grads.push_back(grad([&](const Array& v) { return loss(v, xs, rows); })(ws[i]));
  check_both(jnp::stack(grads), vmap(grad(fsdp), {0, std::nullopt}), ws, xs);
}

TEST_CASE("on_blocks: FSDP steps on process-local blocks equal the single-process steps") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  const double rows = double(n * 4);
  const Array w = data({n * 2, 3}, 11, DType::f64), b = data({3}, 12, DType::f64);
  const Array xs = data({n * 4, n * 2}, 13, DType::f64);
  // Two SGD steps of a linear layer with a bias, in one process on the whole arrays.
  auto full_loss = [&](const std::pair<Array, Array>& p) {
    return loss(p.first, xs, rows) + jnp::sum(p.second * p.second);
  };
  std::pair<Array, Array> want{w, b};
  for (int step = 0; step < 2; ++step) {
    auto g = grad(full_loss)(want);
    want = {want.first - 0.5 * g.first, want.second - 0.5 * g.second};
  }
  // Each process keeps its rows of w (the bias whole) and its rows of the batch; w is gathered
  // in the forward, its gradient reduce-scattered; the bias's gradient is the same everywhere.
  auto sgd = shard_map(
      [rows](const std::pair<Array, Array>& p, const Array& batch) {
        auto g = grad([&](const std::pair<Array, Array>& q) {
          return loss(lax::all_gather(q.first, "x", 0, true), batch, rows) +
                 jnp::sum(q.second * q.second);
        })(p);
        return std::pair{p.first - 0.5 * g.first, p.second - 0.5 * g.second};
      },
      mesh, Specs::per_leaf({P("x"), P(), P("x")}), {P("x"), P()});
  std::pair<Array, Array> blocks{distributed::block_of(w, mesh, P("x")), b};
  const Array batch = distributed::block_of(xs, mesh, P("x"));
  CHECK(blocks.first.shape() == Shape{2, 3});
  CHECK(batch.shape() == Shape{4, n * 2});
  for (int step = 0; step < 2; ++step) blocks = sgd.on_blocks(blocks, batch);
  CHECK(blocks.first.shape() == Shape{2, 3});  // still blocks: nothing gathered
  test::require_close(distributed::gather_blocks(blocks.first, mesh, P("x")).buffer(),
                      want.first.buffer());
  test::require_close(blocks.second.buffer(), want.second.buffer());
  // The same program on whole arrays through the shard_map eqn gives the same first step.
  auto once = sgd(std::pair{w, b}, xs);
  auto first = sgd.on_blocks(std::pair{distributed::block_of(w, mesh, P("x")), b}, batch);
  test::require_close(distributed::gather_blocks(first.first, mesh, P("x")).buffer(),
                      once.first.buffer());
  // Under a trace it is refused with what to call instead.
  CHECK_THROWS_WITH(jit([&](const Array& v) {
                      return sgd.on_blocks(std::pair{v, b}, batch).first;
                    })(blocks.first),
                    Catch::Contains("on_blocks runs on concrete arrays"));
  CHECK_THROWS_WITH(distributed::block_of(jnp::ones({n + 1}), mesh, P("x")),
                    Catch::Contains("distributed::block_of"));
}

// models/gpt's sharded training (models/gpt/sharded.h) against the single-process training, in
// f64 so that Adam's normalised updates compare closely: two steps from the same state on the
// same batch, the losses and the whole state after them.
TEST_CASE("models/gpt: data-parallel and FSDP training steps equal the single-process steps") {
  const int64_t n = processes();
  models::gpt::GptConfig config;
  config.vocab = 24;
  config.d_model = 16;
  config.heads = 2;
  config.seq = 8;
  config.layers = 2;
  models::gpt::TrainOptions options;
  options.batch = 4;
  options.warmup_steps = 0;
  auto to_f64 = [](const auto& tree) {
    return tree_map([](const Array& a) { return a.astype(DType::f64); }, tree);
  };
  const auto whole_opt = models::gpt::make_optimizer(options);
  models::gpt::TrainState start;
  start.params = to_f64(models::gpt::init_gpt(config, random::PRNGKey(3)));
  start.opt_state = whole_opt.init(start.params);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> token(0, int32_t(config.vocab) - 1);
  std::vector<int32_t> ids(size_t(options.batch * config.seq) * 2);
  for (int32_t& t : ids) t = token(rng);
  const Array tokens =
      array(std::vector<int32_t>(ids.begin(), ids.begin() + ptrdiff_t(ids.size() / 2)),
            Shape{options.batch, config.seq});
  const Array labels =
      array(std::vector<int32_t>(ids.begin() + ptrdiff_t(ids.size() / 2), ids.end()),
            Shape{options.batch, config.seq});
  const Array key = random::PRNGKey(0);
  // The single-process step donates its state: `want` starts from a copy.
  auto copy = [](const auto& tree) {
    return tree_map([](const Array& a) { return jnp::copy(a); }, tree);
  };
  models::gpt::TrainState want{copy(start.params), copy(start.opt_state), 0};
  const auto step = models::gpt::make_train_step(config, whole_opt);
  std::vector<float> want_losses;
  for (int i = 0; i < 2; ++i)
    want_losses.push_back(models::gpt::train_step(step, want, tokens, labels, key));
  for (auto mode : {models::gpt::Parallelism::data, models::gpt::Parallelism::fsdp}) {
    INFO((mode == models::gpt::Parallelism::data ? "data parallel" : "FSDP"));
    const auto t = models::gpt::make_sharded_training(config, options, mode);
    models::gpt::TrainState part = t.shard(start);
    if (mode == models::gpt::Parallelism::fsdp)  // a process holds 1/n of each matrix
      CHECK(part.params.blocks.w_qkv.shape() == Shape{2, 16, 48 / n});
    const Array rows_x = distributed::block_of(tokens, t.mesh, P("x"));
    const Array rows_y = distributed::block_of(labels, t.mesh, P("x"));
    for (int i = 0; i < 2; ++i)
      CHECK(t.step(part, rows_x, rows_y, key) == Approx(want_losses[size_t(i)]).epsilon(1e-6));
    const models::gpt::TrainState got = t.gather(part);
    const std::vector<Array> g = tree_leaves(std::pair{got.params, got.opt_state});
    const std::vector<Array> w = tree_leaves(std::pair{want.params, want.opt_state});
    REQUIRE(g.size() == w.size());
    for (size_t i = 0; i < g.size(); ++i) test::require_close(g[i].buffer(), w[i].buffer());
  }
}

TEST_CASE("a process that never reaches the shard_map ends the job with a message", "[.abort]") {
  const int64_t n = processes();
  const Mesh mesh({n}, {"x"});
  if (distributed::process_index() == n - 1) return;  // this one takes another path
  auto total = shard_map([](const Array& a) { return lax::psum(a, "x"); }, mesh, {P("x")}, {P()});
  UseInterpreter interp;
  total(jnp::ones({n}));
  FAIL("the shard_map returned without every process");
}

}  // namespace distributed_test
}  // namespace cjax
