#include "tests/property/random_program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <source_location>
#include <span>

#include "cjax/numpy_util.h"
#include "passes/policies.h"

namespace prop {

using cjax::Array;
using cjax::Shape;
namespace lax = cjax::lax;
namespace np = cjax::numpy;

namespace {

constexpr int64_t kMaxElements = 64;
constexpr size_t kMaxRank = 4;
const char* const kNames[] = {"a", "b", "c"};
const char* const kUnaryNames[] = {
    "sin",        "cos",       "tanh",           "logistic",       "neg",
    "square",     "cube",      "exp(sin x)",     "log(1+x^2)",     "sqrt(1+x^2)",
    "log1p(x^2)", "x/(1+x^2)", "custom_jvp sin", "custom_vjp tanh"};
constexpr uint32_t kNumUnary = sizeof(kUnaryNames) / sizeof(kUnaryNames[0]);
const char* const kBinaryNames[] = {"add", "sub", "mul", "x/(2+sin y)"};

int64_t num_elements(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

// numpy broadcasting compatibility.
bool broadcastable(const Shape& x, const Shape& y) {
  for (size_t i = 1; i <= std::min(x.size(), y.size()); ++i) {
    int64_t a = x[x.size() - i], b = y[y.size() - i];
    if (a != b && a != 1 && b != 1) return false;
  }
  return true;
}

// sin as a custom_jvp (its rule: cos x · t) and tanh as a custom_vjp (fwd saves the output, bwd
// is g (1 - y²)): every property then checks the custom rules' differentiation, batching,
// remat and lowering too.
Array custom_sin(const Array& x) {
  static const cjax::CustomJvp<Array, const Array&> f = [] {
    cjax::CustomJvp<Array, const Array&> g([](const Array& a) { return lax::sin(a); },
                                           "custom_sin");
    g.defjvp(
        [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
          return std::pair{lax::sin(std::get<0>(p)), lax::cos(std::get<0>(p)) * std::get<0>(t)};
        },
        "custom_sin_jvp");
    return g;
  }();
  return f(x);
}

Array custom_tanh(const Array& x) {
  static const cjax::CustomVjp<Array, const Array&> f = [] {
    cjax::CustomVjp<Array, const Array&> g([](const Array& a) { return lax::tanh(a); },
                                           "custom_tanh");
    g.defvjp(
        [](const Array& a) {
          const Array y = lax::tanh(a);
          return std::pair{y, y};
        },
        [](const Array& y, const Array& ct) { return ct * (1.0 - y * y); }, "custom_tanh_fwd",
        "custom_tanh_bwd");
    return g;
  }();
  return f(x);
}

Array unary(uint32_t which, const Array& x) {
  auto one_plus_sq = [&] { return 1.0 + x * x; };
  switch (which % kNumUnary) {
    case 0:
      return lax::sin(x);
    case 1:
      return lax::cos(x);
    case 2:
      return lax::tanh(x);
    case 3:
      return lax::logistic(x);
    case 4:
      return lax::neg(x);
    case 5:
      return lax::integer_pow(x, 2);
    case 6:
      return lax::integer_pow(x, 3);
    case 7:
      return lax::exp(lax::sin(x));
    case 8:
      return lax::log(one_plus_sq());
    case 9:
      return lax::sqrt(one_plus_sq());
    case 10:
      return lax::log1p(x * x);
    case 11:
      return x / one_plus_sq();
    case 12:
      return custom_sin(x);
    default:
      return custom_tanh(x);
  }
}

Array binary(uint32_t which, const Array& x, const Array& y) {
  switch (which % 4) {
    case 0:
      return np::add(x, y);
    case 1:
      return np::subtract(x, y);
    case 2:
      return np::multiply(x, y);
    default:
      return np::divide(x, lax::sin(y) + 2.0);
  }
}

// The k-th permutation of 0..n-1 (Lehmer code).
std::vector<int64_t> permutation(size_t n, uint32_t k) {
  std::vector<int64_t> rest(n), out;
  std::iota(rest.begin(), rest.end(), 0);
  while (!rest.empty()) {
    size_t i = k % rest.size();
    k /= static_cast<uint32_t>(rest.size());
    out.push_back(rest[i]);
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

// dot_general dimension numbers for x·y: one contracting pair and, when c allows, one batch pair,
// among the pairs of equal-sized dims; nullopt when there is none or the result is too big.
std::optional<cjax::DotDimensionNumbers> dot_dims(const Shape& x, const Shape& y, uint32_t c) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < y.size(); ++j)
      if (x[i] == y[j]) pairs.emplace_back(i, j);
  if (pairs.empty()) return std::nullopt;
  cjax::DotDimensionNumbers d;
  auto [ci, cj] = pairs[c % pairs.size()];
  d.lhs_contract = {ci};
  d.rhs_contract = {cj};
  if ((c / 7) % 2 == 1) {
    for (size_t k = 0; k < pairs.size(); ++k) {
      auto [bi, bj] = pairs[(k + c / 14) % pairs.size()];
      if (bi != ci && bj != cj) {
        d.lhs_batch = {bi};
        d.rhs_batch = {bj};
        break;
      }
    }
  }
  size_t nb = d.lhs_batch.size();
  size_t rank = nb + (x.size() - 1 - nb) + (y.size() - 1 - nb);
  int64_t elems = num_elements(x) * num_elements(y) / (x[ci] * x[ci]);
  if (!d.lhs_batch.empty()) elems /= x[d.lhs_batch[0]];
  if (rank > kMaxRank || elems > kMaxElements) return std::nullopt;
  return d;
}

std::vector<int64_t> reduce_axes(size_t rank, uint32_t c) {
  std::vector<int64_t> axes;
  uint32_t mask = c % (1u << rank);
  if (mask == 0) mask = (1u << rank) - 1;
  for (size_t i = 0; i < rank; ++i)
    if (mask & (1u << i)) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

void run(const std::vector<Instr>& instrs, std::vector<Array>& pool);

// One instruction: appends its results to the pool, or nothing when it does not apply (e.g. a dot
// of arrays without equal-sized dims).
void step(const Instr& in, std::vector<Array>& pool) {
  const Array& x = pool[in.a % pool.size()];
  const Shape& xs = x.shape();
  switch (in.op) {
    case Op::unary:
      pool.push_back(unary(in.c, x));
      return;
    case Op::scalar:
      pool.push_back(x * 0.5 + 1.5);
      return;
    case Op::binary: {
      // The first value from pick b on that broadcasts with x (x itself at worst).
      for (size_t k = 0; k < pool.size(); ++k) {
        const Array& y = pool[(in.b + k) % pool.size()];
        if (!broadcastable(xs, y.shape())) continue;
        pool.push_back(binary(in.c, x, y));
        return;
      }
      return;
    }
    case Op::dot: {
      const Array& y = pool[in.b % pool.size()];
      if (auto d = dot_dims(xs, y.shape(), in.c)) pool.push_back(lax::dot_general(x, y, *d));
      return;
    }
    case Op::reduce:
      if (xs.empty()) return;
      if (in.c % 3 == 2)
        pool.push_back(lax::reduce_prod(x, reduce_axes(xs.size(), in.c / 3)));
      else
        pool.push_back(lax::reduce_sum(x, reduce_axes(xs.size(), in.c / 3)));
      return;
    case Op::transpose:
      if (xs.size() >= 2) pool.push_back(lax::transpose(x, permutation(xs.size(), in.c)));
      return;
    case Op::reshape:
      if (in.c % 2 == 0 || xs.size() >= kMaxRank) {
        pool.push_back(lax::reshape(x, {num_elements(xs)}));
      } else {
        Shape s = xs;
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(in.c / 2 % (xs.size() + 1)), 1);
        pool.push_back(lax::reshape(x, s));
      }
      return;
    case Op::broadcast: {
      if (xs.size() >= kMaxRank || 2 * num_elements(xs) > kMaxElements) return;
      Shape s{2};
      s.insert(s.end(), xs.begin(), xs.end());
      std::vector<int64_t> dims(xs.size());
      std::iota(dims.begin(), dims.end(), 1);
      pool.push_back(lax::broadcast_in_dim(x, s, dims));
      return;
    }
    case Op::name:
      pool.push_back(cjax::checkpoint_name(x, kNames[in.c % 3]));
      return;
    case Op::remat: {
      const NamedPolicy& p = all_policies()[in.c % all_policies().size()];
      const std::vector<Instr>& body = in.body;
      auto f = [&body](const std::vector<Array>& args) {
        std::vector<Array> inner = args;
        run(body, inner);
        return std::vector<Array>(inner.begin() + static_cast<std::ptrdiff_t>(args.size()),
                                  inner.end());
      };
      if (in.jit) {
        auto call = [&f](std::span<const Array> args) {
          return f(std::vector<Array>(args.begin(), args.end()));
        };
        std::vector<Array> outs =
            np::detail::call_jitted("f", call, pool, std::source_location::current());
        pool.insert(pool.end(), outs.begin(), outs.end());
        return;
      }
      std::vector<Array> outs = cjax::checkpoint(f, p.policy, in.b % 2 == 0)(pool);
      pool.insert(pool.end(), outs.begin(), outs.end());
      return;
    }
  }
}

void run(const std::vector<Instr>& instrs, std::vector<Array>& pool) {
  for (const Instr& in : instrs) step(in, pool);
}

std::vector<Instr> generate_instrs(std::mt19937_64& rng, int count, int depth,
                                   const GenOptions& opts) {
  std::vector<Instr> out;
  std::uniform_int_distribution<uint32_t> pick;
  // Weights: unary 4, binary 4, scalar 1, dot 3, reduce 2, transpose 1, reshape 1, broadcast 1,
  // name 2, remat 2.
  static const Op table[] = {
      Op::unary,     Op::unary,   Op::unary,     Op::unary, Op::binary, Op::binary, Op::binary,
      Op::binary,    Op::scalar,  Op::dot,       Op::dot,   Op::dot,    Op::reduce, Op::reduce,
      Op::transpose, Op::reshape, Op::broadcast, Op::name,  Op::name,   Op::remat,  Op::remat};
  constexpr size_t kTable = sizeof(table) / sizeof(table[0]);
  for (int i = 0; i < count; ++i) {
    Instr in;
    in.op = table[pick(rng) % kTable];
    in.a = pick(rng);
    in.b = pick(rng);
    in.c = pick(rng);
    if (in.op == Op::remat) {
      if (depth >= opts.max_remat_depth) {
        in.op = Op::unary;
      } else {
        int n = 1 + static_cast<int>(pick(rng) % 4);
        in.body = generate_instrs(rng, n, depth + 1, opts);
        in.jit = opts.jit_calls && in.b / 2 % 4 == 3;
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

void describe_instrs(const std::vector<Instr>& instrs, int indent, std::string& out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  for (const Instr& in : instrs) {
    switch (in.op) {
      case Op::unary:
        out += fmt::format("{}unary {} (pick {})\n", pad, kUnaryNames[in.c % kNumUnary], in.a);
        break;
      case Op::binary:
        out += fmt::format("{}binary {} (picks {}, {})\n", pad, kBinaryNames[in.c % 4], in.a, in.b);
        break;
      case Op::scalar:
        out += fmt::format("{}x*0.5+1.5 (pick {})\n", pad, in.a);
        break;
      case Op::dot:
        out += fmt::format("{}dot_general (picks {}, {}, dims {})\n", pad, in.a, in.b, in.c);
        break;
      case Op::reduce:
        out += fmt::format("{}{} (pick {}, axes {})\n", pad,
                           in.c % 3 == 2 ? "reduce_prod" : "reduce_sum", in.a, in.c / 3);
        break;
      case Op::transpose:
        out += fmt::format("{}transpose (pick {}, perm {})\n", pad, in.a, in.c);
        break;
      case Op::reshape:
        out += fmt::format("{}reshape (pick {}, variant {})\n", pad, in.a, in.c);
        break;
      case Op::broadcast:
        out += fmt::format("{}broadcast (pick {})\n", pad, in.a);
        break;
      case Op::name:
        out += fmt::format("{}checkpoint_name '{}' (pick {})\n", pad, kNames[in.c % 3], in.a);
        break;
      case Op::remat:
        if (in.jit)
          out += fmt::format("{}jit:\n", pad);
        else
          out += fmt::format("{}checkpoint policy={} prevent_cse={}:\n", pad,
                             all_policies()[in.c % all_policies().size()].name, in.b % 2 == 0);
        describe_instrs(in.body, indent + 2, out);
        break;
    }
  }
}

size_t count_instrs(const std::vector<Instr>& instrs) {
  size_t n = 0;
  for (const Instr& in : instrs) n += 1 + count_instrs(in.body);
  return n;
}

// Every instruction list one deletion (or remat inlining) away from `instrs`.
std::vector<std::vector<Instr>> shrink_instrs(const std::vector<Instr>& instrs) {
  std::vector<std::vector<Instr>> out;
  for (size_t i = 0; i < instrs.size(); ++i) {
    std::vector<Instr> v = instrs;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(std::move(v));
    if (instrs[i].op == Op::remat) {
      std::vector<Instr> inl(instrs.begin(), instrs.begin() + static_cast<std::ptrdiff_t>(i));
      inl.insert(inl.end(), instrs[i].body.begin(), instrs[i].body.end());
      inl.insert(inl.end(), instrs.begin() + static_cast<std::ptrdiff_t>(i) + 1, instrs.end());
      out.push_back(std::move(inl));
      for (auto& body : shrink_instrs(instrs[i].body)) {
        std::vector<Instr> w = instrs;
        w[i].body = std::move(body);
        out.push_back(std::move(w));
      }
    }
  }
  return out;
}

}  // namespace

const std::vector<NamedPolicy>& all_policies() {
  namespace P = cjax::policies;
  static const std::vector<NamedPolicy> list = {
      {"None", nullptr},
      {"everything_saveable", P::everything_saveable()},
      {"nothing_saveable", P::nothing_saveable()},
      {"dots_saveable", P::dots_saveable()},
      {"dots_with_no_batch_dims_saveable", P::dots_with_no_batch_dims_saveable()},
      {"save_anything_except_these_names(a)", P::save_anything_except_these_names({"a"})},
      {"save_any_names_but_these(b)", P::save_any_names_but_these({"b"})},
      {"save_only_these_names(a,c)", P::save_only_these_names({"a", "c"})},
      {"offload_dot_with_no_batch_dims",
       P::offload_dot_with_no_batch_dims("device", "pinned_host")},
      {"save_and_offload_only_these_names(a; b)",
       P::save_and_offload_only_these_names({"a"}, {"b"}, "device", "pinned_host")},
      {"save_from_both_policies(dots, names(c))",
       P::save_from_both_policies(P::dots_saveable(), P::save_only_these_names({"c"}))},
  };
  return list;
}

Program generate(uint64_t seed, const GenOptions& opts) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> pick;
  Program p;
  p.seed = seed;
  size_t n_inputs = 1 + pick(rng) % 3;
  for (size_t i = 0; i < n_inputs; ++i) {
    size_t rank = pick(rng) % 4;  // 0..3, rank 3 rarely kept small
    Shape s;
    for (size_t d = 0; d < rank; ++d) s.push_back(1 + pick(rng) % 3);
    p.inputs.push_back(s);
  }
  int count = 1 + static_cast<int>(pick(rng) % static_cast<uint32_t>(opts.max_instrs));
  p.instrs = generate_instrs(rng, count, 0, opts);
  p.out_pick = pick(rng);
  return p;
}

std::string describe(const Program& p) {
  std::string out = fmt::format("program (seed {}):\n  inputs:", p.seed);
  for (const Shape& s : p.inputs) out += fmt::format(" f64[{}]", fmt::join(s, ","));
  out += "\n";
  describe_instrs(p.instrs, 2, out);
  out += fmt::format("  outputs: the last value{}\n",
                     p.out_pick % 2 ? fmt::format(" and pick {}", p.out_pick / 2) : "");
  return out;
}

cjax::Jaxpr trace(const Program& p) {
  std::vector<Array> args;
  for (const Shape& s : p.inputs) args.push_back(np::zeros(s, cjax::DType::f64));
  auto f = [&p](const std::vector<Array>& xs) {
    std::vector<Array> pool = xs;
    run(p.instrs, pool);
    std::vector<Array> outs{pool.back()};
    if (p.out_pick % 2) outs.push_back(pool[p.out_pick / 2 % pool.size()]);
    return outs;
  };
  return cjax::make_jaxpr(f, {"x"})(args);
}

size_t size(const Program& p) {
  return count_instrs(p.instrs);
}

std::vector<Program> shrink_candidates(const Program& p) {
  std::vector<Program> out;
  for (auto& instrs : shrink_instrs(p.instrs)) {
    Program q = p;
    q.instrs = std::move(instrs);
    out.push_back(std::move(q));
  }
  if (p.out_pick % 2) {
    Program q = p;
    q.out_pick = 0;
    out.push_back(std::move(q));
  }
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i].empty()) continue;
    Program q = p;
    q.inputs[i].pop_back();
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace prop
