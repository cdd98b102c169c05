// User-defined derivatives, as jax.custom_jvp and jax.custom_vjp.
//
//   auto lse = cjax::custom_jvp(stable_lse_body, "stable_lse");
//   lse.defjvp([&](const auto& primals, const auto& tangents) {
//     auto [x] = primals;
//     auto [t] = tangents;
//     Array ans = lse(x);                                   // the primal: lse itself
//     return std::pair{ans, np::sum(np::exp(x - ans) * t)};
//   }, "stable_lse_jvp");
//
//   auto clip = cjax::custom_vjp([](const Array& x) { return x; }, "clip_gradient");
//   clip.defvjp([](const Array& x) { return std::pair{x, std::tuple<>{}}; },     // fwd: out, res
//               [](const std::tuple<>&, const Array& g) { return np::clip(g, -1.0, 1.0); });
//
// Calling one binds custom_jvp_call[name call_jaxpr jvp symbolic_zeros] or
// custom_vjp_call[name bwd call_jaxpr fwd symbolic_zeros] on the argument leaves (values the
// function captures come first, counted by num_consts), which evaluates the function itself;
// jvp/grad/vjp/linearize use the rule instead, traced when a pass needs it. A custom_jvp rule
// takes the primals and the tangents as tuples (one entry per argument) and returns the pair
// (primal outputs, tangent outputs); `defjvps` gives one rule per argument instead. A
// custom_vjp's fwd takes the arguments and returns the pair (outputs, residuals: any pytree),
// its bwd takes (residuals, output cotangents) and returns one cotangent per argument (a tuple
// of them, or the one). jvp of a custom_vjp function fails, as in JAX. Rules may not capture
// arrays (pass them as arguments); C++ numbers are fine.
//
// nondiff_argnums, as JAX's: `custom_jvp(f, nondiff_argnums<0>)` makes argument 0 a static value
// (an int, a double, a function: anything but an Array), baked into the traced function. The jvp
// rule then takes it first, `rule(n, primals, tangents)`, the tuples holding the other arguments;
// a custom_vjp's fwd takes every argument, its bwd `bwd(n, residuals, cotangents)` and returns
// cotangents for the other arguments only.
//
// symbolic_zeros=true (defjvp's and defvjp's last argument): the rule sees which tangents are
// zero instead of getting instantiated zeros; `is_symbolic_zero(t)` tells, and a zero tangent
// costs nothing unless the rule computes with it. A custom_vjp's fwd then asks
// `is_perturbed(x)` of each argument, and its bwd sees zero output cotangents the same way.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cjax/make_jaxpr.h"
#include "cjax/pytree.h"
#include "cjax/trace.h"
#include "ir/errors.h"
#include "ir/jaxpr.h"
#include "ir/source_info.h"
#include "passes/custom_rules.h"

namespace cjax {

// Inside a rule traced with symbolic_zeros=true: whether `t` is a tangent (or a cotangent) that
// is known to be zero, JAX's `type(t) is SymbolicZero`.
bool is_symbolic_zero(const Array& t);
// Inside a custom_vjp's fwd traced with symbolic_zeros=true: whether argument `x` has a nonzero
// tangent, JAX's CustomVJPPrimal.perturbed. Elsewhere: true.
bool is_perturbed(const Array& x);

// The argument positions that are static values, not differentiated (JAX's nondiff_argnums):
// `custom_jvp(f, cjax::nondiff_argnums<0>)`.
template <size_t... I>
struct NondiffArgnums {};
template <size_t... I>
inline constexpr NondiffArgnums<I...> nondiff_argnums{};

namespace detail {

// The function's trace as call_jaxpr: captured values become the leading operands (num_consts).
struct CustomBody {
  JaxprRef jaxpr;
  std::vector<Array> consts;
};
CustomBody custom_body(ClosedTrace closed);

// Traces `body` (flat tracers -> flat outputs) over flat trees of these avals, as a fresh trace
// (outer traces hidden), into a jaxpr that captures nothing; `what` names the rule in the error.
// Eqns traced in a lambda are attributed to `rule_name` (when the rule has one), so that reports
// name a residual after the rule that made it: `output of tanh from f.cc:12 (my_fwd)`.
using FlatBody = std::function<std::vector<Array>(std::span<const Array>)>;
Jaxpr trace_rule(std::span<const ShapedArray> avals, const FlatBody& body, const std::string& what,
                 const std::string& rule_name);

// Binds custom_jvp_call or custom_vjp_call on the consts and the argument leaves.
std::vector<Array> bind_custom_call(const char* prim, const CustomBody& body,
                                    std::span<const Array> leaves, Params params,
                                    const SourceInfo& src);

// While a rule with symbolic zeros is traced: the zero tangents it was given (made here, zeros
// of `aval` that cost nothing unused) and the unperturbed arguments of a fwd.
class SymbolicZeroScope {
 public:
  SymbolicZeroScope();
  ~SymbolicZeroScope();
  SymbolicZeroScope(const SymbolicZeroScope&) = delete;
  SymbolicZeroScope& operator=(const SymbolicZeroScope&) = delete;
  Array zero(const ShapedArray& aval);
  void unperturbed(const Array& x);

 private:
  class Marks;
  std::unique_ptr<Marks> marks_;
};

// The tangents of a rule traced over `primal` avals: the leaves `given` in order where `zeros`
// is false, symbolic zeros (made in `scope`) where it is true.
std::vector<Array> with_symbolic_zeros(std::span<const Array> given,
                                       std::span<const ShapedArray> avals,
                                       std::span<const bool> zeros, SymbolicZeroScope& scope);

// Sum of two tangents (JAX's add_tangents: add_any), and a zero one.
Array add_tangents(const Array& a, const Array& b);
Array zeros_like(const Array& x);

std::vector<ShapedArray> leaf_avals(std::span<const Array> leaves);

template <class Tuple, size_t... I>
Tuple rebuild_tuple(const Tuple& protos, std::span<const Array> leaves,
                    const std::vector<size_t>& offsets, std::index_sequence<I...>) {
  return Tuple(tree_unflatten(std::get<I>(protos),
                              leaves.subspan(offsets[I], offsets[I + 1] - offsets[I]))...);
}

template <class Tuple>
Tuple rebuild(const Tuple& protos, std::span<const Array> leaves) {
  std::vector<size_t> offsets{0};
  std::apply(
      [&](const auto&... p) {
        (offsets.push_back(offsets.back() + tree_flatten(p).leaves.size()), ...);
      },
      protos);
  return rebuild_tuple(protos, leaves, offsets,
                       std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

template <class Tuple>
std::vector<Array> tuple_leaves(const Tuple& t) {
  std::vector<Array> out;
  std::apply(
      [&](const auto&... x) {
        (
            [&] {
              FlatTree f = tree_flatten(x);
              out.insert(out.end(), f.leaves.begin(), f.leaves.end());
            }(),
            ...);
      },
      t);
  return out;
}

template <class T>
std::vector<Array> leaves_of(const T& x) {
  return tree_flatten(x).leaves;
}

template <class Tuple, size_t... I>
auto pick_types(std::index_sequence<I...>) -> std::tuple<std::tuple_element_t<I, Tuple>...>;

// A custom function's arguments split into the static ones (NondiffArgnums) and the
// differentiated ones, each kept in order.
template <class Nondiff, class... Args>
struct Signature;
template <size_t... ND, class... Args>
struct Signature<NondiffArgnums<ND...>, Args...> {
  static constexpr size_t N = sizeof...(Args);
  static constexpr std::array<size_t, sizeof...(ND)> nondiff{ND...};
  static constexpr bool is_nondiff(size_t i) { return ((i == ND) || ...); }
  static constexpr bool valid() {
    for (size_t k = 0; k < nondiff.size(); ++k)
      if (nondiff[k] >= N || (k > 0 && nondiff[k] <= nondiff[k - 1])) return false;
    return true;
  }
  static_assert(valid(), "nondiff_argnums must be increasing argument positions");
  static constexpr std::array<size_t, N - sizeof...(ND)> diff = [] {
    std::array<size_t, N - sizeof...(ND)> out{};
    for (size_t i = 0, k = 0; i < N; ++i)
      if (!is_nondiff(i)) out[k++] = i;
    return out;
  }();
  // Position of argument i among the static (or the differentiated) ones.
  static constexpr size_t rank(size_t i) {
    size_t r = 0;
    for (size_t j = 0; j < i; ++j) r += is_nondiff(j) == is_nondiff(i);
    return r;
  }

  using Call = std::tuple<std::decay_t<Args>...>;
  template <size_t... K>
  static auto diff_seq(std::index_sequence<K...>) -> std::index_sequence<diff[K]...>;
  using DiffSeq = decltype(diff_seq(std::make_index_sequence<diff.size()>{}));
  using DiffCall = decltype(pick_types<Call>(DiffSeq{}));
  using NondiffCall = decltype(pick_types<Call>(std::index_sequence<ND...>{}));

  static_assert(!(std::is_same_v<std::tuple_element_t<ND, Call>, Array> || ...),
                "a nondiff_argnums argument is a static value; an Array is differentiated "
                "(or captured by the function)");

  static NondiffCall nondiff_part(const Call& c) { return NondiffCall(std::get<ND>(c)...); }
  static DiffCall diff_part(const Call& c) { return diff_part(c, DiffSeq{}); }
  template <size_t... I>
  static DiffCall diff_part(const Call& c, std::index_sequence<I...>) {
    return DiffCall(std::get<I>(c)...);
  }
  template <size_t I>
  static const std::tuple_element_t<I, Call>& arg(const NondiffCall& nd, const DiffCall& d) {
    if constexpr (is_nondiff(I))
      return std::get<rank(I)>(nd);
    else
      return std::get<rank(I)>(d);
  }
  static Call merge(const NondiffCall& nd, const DiffCall& d) {
    return merge(nd, d, std::make_index_sequence<N>{});
  }
  template <size_t... I>
  static Call merge(const NondiffCall& nd, const DiffCall& d, std::index_sequence<I...>) {
    return Call(arg<I>(nd, d)...);
  }
};

// One call of a custom function, traced: its body, the leaves it binds, and the structures
// its rules rebuild (the static arguments by value).
template <class R, class Sig>
struct TracedCustomCall {
  CustomBody body;
  std::vector<Array> leaves;
  std::shared_ptr<const typename Sig::NondiffCall> nondiff;
  std::shared_ptr<const typename Sig::DiffCall> protos;
  std::shared_ptr<const R> out_proto;
};

template <class R, class Sig, class F>
TracedCustomCall<R, Sig> trace_custom_call(const F& f, const typename Sig::Call& call) {
  TracedCustomCall<R, Sig> t;
  t.nondiff = std::make_shared<const typename Sig::NondiffCall>(Sig::nondiff_part(call));
  t.protos = std::make_shared<const typename Sig::DiffCall>(Sig::diff_part(call));
  t.leaves = tuple_leaves(*t.protos);
  std::optional<R> proto;
  ClosedTrace closed = trace_to_jaxpr(
      [&](std::span<const Array> tracers) {
        R r = std::apply(f, Sig::merge(*t.nondiff, rebuild(*t.protos, tracers)));
        std::vector<Array> out = leaves_of(r);
        proto.emplace(std::move(r));
        return out;
      },
      leaf_avals(t.leaves));
  t.body = custom_body(std::move(closed));
  t.out_proto = std::make_shared<const R>(std::move(*proto));
  return t;
}

}  // namespace detail

// jax.custom_jvp for a function of signature R(Args...), with static arguments at Nondiff.
template <class Nondiff, class R, class... Args>
class BasicCustomJvp {
  using Sig = detail::Signature<Nondiff, Args...>;

 public:
  using Call = typename Sig::Call;
  using DiffCall = typename Sig::DiffCall;
  using NondiffCall = typename Sig::NondiffCall;

  BasicCustomJvp(std::function<R(Args...)> f, std::string name)
      : state_(std::make_shared<State>()) {
    state_->f = std::move(f);
    state_->name = std::move(name);
  }

  // The rule: rule(static args..., primals, tangents) -> std::pair{primal outs, tangent outs},
  // primals and tangents being tuples of the differentiated arguments. `rule_name` is what the
  // jaxpr prints as `jvp=` (JAX: the rule's function name).
  template <class Rule>
  BasicCustomJvp& defjvp(Rule rule, std::string rule_name = "<lambda>",
                         bool symbolic_zeros = false) {
    state_->rule = [rule = std::move(rule)](const NondiffCall& nd, const DiffCall& p,
                                            const DiffCall& t) -> std::pair<R, R> {
      return std::apply([&](const auto&... s) { return rule(s..., p, t); }, nd);
    };
    state_->rule_name = std::move(rule_name);
    state_->symbolic_zeros = symbolic_zeros;
    return *this;
  }

  // JAX's defjvps: one rule per argument, jvp_i(tangent_i, primal_out, args...) -> its part of
  // the output tangent (nullptr: the argument contributes none); the parts are summed.
  template <class... Jvps>
  BasicCustomJvp& defjvps(Jvps... jvps) {
    static_assert(Sig::nondiff.empty(), "Can't use defjvps with nondiff_argnums.");
    static_assert(sizeof...(Jvps) == sizeof...(Args), "defjvps takes one rule per argument");
    std::weak_ptr<State> weak = state_;
    return defjvp(
        [weak, jvps...](const Call& primals, const Call& tangents) {
          BasicCustomJvp self(weak.lock());
          R ans = std::apply(self, primals);
          std::vector<Array> sum;
          auto add = [&](const auto& jvp, const auto& t) {
            if constexpr (!std::is_null_pointer_v<std::decay_t<decltype(jvp)>>) {
              std::vector<Array> part = detail::leaves_of(
                  R(std::apply([&](const auto&... p) { return jvp(t, ans, p...); }, primals)));
              if (sum.empty()) {
                sum = std::move(part);
              } else {
                for (size_t i = 0; i < sum.size(); ++i)
                  sum[i] = detail::add_tangents(sum[i], part.at(i));
              }
            }
          };
          std::apply([&](const auto&... t) { (add(jvps, t), ...); }, tangents);
          if (sum.empty())
            for (const Array& y : detail::leaves_of(ans)) sum.push_back(detail::zeros_like(y));
          R tangent_out = tree_unflatten(ans, sum);
          return std::pair<R, R>{std::move(ans), std::move(tangent_out)};
        },
        "jvp");
  }

  R operator()(const std::decay_t<Args>&... args,
               SourceInfo src = std::source_location::current()) const {
    if (!state_->rule)
      throw UsageError("No JVP defined for custom_jvp function " + state_->name + " using defjvp.");
    auto t = detail::trace_custom_call<R, Sig>(state_->f, Call(args...));
    auto rule = std::make_shared<const JvpRule>(state_, t.nondiff, t.protos);
    Params p{{"name", state_->name},
             {"call_jaxpr", t.body.jaxpr},
             {"jvp", ObjectRef(rule)},
             {"num_consts", int64_t(t.body.consts.size())},
             {"symbolic_zeros", state_->symbolic_zeros}};
    return tree_unflatten(*t.out_proto, detail::bind_custom_call("custom_jvp_call", t.body,
                                                                 t.leaves, std::move(p), src));
  }

 private:
  struct State {
    std::function<R(Args...)> f;
    std::string name;
    std::function<std::pair<R, R>(const NondiffCall&, const DiffCall&, const DiffCall&)> rule;
    std::string rule_name;
    bool symbolic_zeros = false;
  };
  explicit BasicCustomJvp(std::shared_ptr<State> s) : state_(std::move(s)) {
    if (!state_) throw Error("custom_jvp: the function was destroyed before its rule ran");
  }

  // The rule, for one call's argument structure.
  class JvpRule : public CustomJvpRule {
   public:
    JvpRule(std::shared_ptr<State> s, std::shared_ptr<const NondiffCall> nondiff,
            std::shared_ptr<const DiffCall> protos)
        : s_(std::move(s)), nondiff_(std::move(nondiff)), protos_(std::move(protos)) {}
    std::string repr() const override { return s_->rule_name; }
    Jaxpr jvp_jaxpr(std::span<const ShapedArray> primals,
                    std::span<const bool> zeros) const override {
      std::vector<ShapedArray> avals(primals.begin(), primals.end());
      for (size_t i = 0; i < primals.size(); ++i)
        if (!zeros[i]) avals.push_back(primals[i]);
      const size_t n = primals.size();
      return detail::trace_rule(
          avals,
          [&](std::span<const Array> in) {
            detail::SymbolicZeroScope scope;
            const std::vector<Array> tangents =
                detail::with_symbolic_zeros(in.subspan(n), primals, zeros, scope);
            auto [p, t] = s_->rule(*nondiff_, detail::rebuild(*protos_, in.first(n)),
                                   detail::rebuild(*protos_, tangents));
            std::vector<Array> out = detail::leaves_of(p), touts = detail::leaves_of(t);
            out.insert(out.end(), touts.begin(), touts.end());
            return out;
          },
          "the jvp rule of custom_jvp function " + s_->name, s_->rule_name);
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const NondiffCall> nondiff_;
    std::shared_ptr<const DiffCall> protos_;
  };

  std::shared_ptr<State> state_;
};

// jax.custom_vjp for a function of signature R(Args...), with static arguments at Nondiff.
template <class Nondiff, class R, class... Args>
class BasicCustomVjp {
  using Sig = detail::Signature<Nondiff, Args...>;

 public:
  using Call = typename Sig::Call;
  using DiffCall = typename Sig::DiffCall;
  using NondiffCall = typename Sig::NondiffCall;

  BasicCustomVjp(std::function<R(Args...)> f, std::string name)
      : state_(std::make_shared<State>()) {
    state_->f = std::move(f);
    state_->name = std::move(name);
  }

  // fwd(args...) -> std::pair{outputs, residuals}; bwd(static args..., residuals, output
  // cotangents) -> one cotangent per differentiated argument (a tuple, or the one). The names
  // are what the jaxpr prints.
  template <class Fwd, class Bwd>
  BasicCustomVjp& defvjp(Fwd fwd, Bwd bwd, std::string fwd_name = "<lambda>",
                         std::string bwd_name = "<lambda>", bool symbolic_zeros = false) {
    using Res = std::decay_t<decltype(std::declval<std::invoke_result_t<Fwd&, Args...>>().second)>;
    auto res_proto = std::make_shared<std::optional<Res>>();
    auto mu = std::make_shared<std::mutex>();
    // Flat forms: fwd on the argument leaves -> (output leaves, residual leaves), remembering
    // the residuals' structure for bwd.
    state_->fwd = [fwd, res_proto, mu](const Call& call, size_t* num_res) {
      auto [out, res] = std::apply(fwd, call);
      std::vector<Array> leaves = detail::leaves_of(out), r = detail::leaves_of(res);
      *num_res = r.size();
      leaves.insert(leaves.end(), r.begin(), r.end());
      std::lock_guard lock(*mu);
      *res_proto = std::move(res);
      return leaves;
    };
    state_->bwd = [bwd, res_proto, mu](const NondiffCall& nd, std::span<const Array> res,
                                       const R& ct) {
      std::optional<Res> r;
      {
        std::lock_guard lock(*mu);
        if (!*res_proto) throw Error("custom_vjp: bwd traced before fwd");
        r.emplace(tree_unflatten(**res_proto, res));
      }
      return detail::leaves_of(std::apply([&](const auto&... s) { return bwd(s..., *r, ct); }, nd));
    };
    state_->fwd_name = std::move(fwd_name);
    state_->bwd_name = std::move(bwd_name);
    state_->symbolic_zeros = symbolic_zeros;
    return *this;
  }

  R operator()(const std::decay_t<Args>&... args,
               SourceInfo src = std::source_location::current()) const {
    if (!state_->fwd)
      throw UsageError("No VJP defined for custom_vjp function " + state_->name + " using defvjp.");
    auto t = detail::trace_custom_call<R, Sig>(state_->f, Call(args...));
    Params p{{"name", state_->name},
             {"bwd", ObjectRef(std::make_shared<const Bwd>(state_, t.nondiff, t.out_proto))},
             {"call_jaxpr", t.body.jaxpr},
             {"fwd", ObjectRef(std::make_shared<const Fwd>(state_, t.nondiff, t.protos))},
             {"num_consts", int64_t(t.body.consts.size())},
             {"symbolic_zeros", state_->symbolic_zeros}};
    return tree_unflatten(*t.out_proto, detail::bind_custom_call("custom_vjp_call", t.body,
                                                                 t.leaves, std::move(p), src));
  }

 private:
  struct State {
    std::function<R(Args...)> f;
    std::string name;
    std::function<std::vector<Array>(const Call&, size_t*)> fwd;
    std::function<std::vector<Array>(const NondiffCall&, std::span<const Array>, const R&)> bwd;
    std::string fwd_name, bwd_name;
    bool symbolic_zeros = false;
  };

  class Fwd : public CustomVjpFwd {
   public:
    Fwd(std::shared_ptr<State> s, std::shared_ptr<const NondiffCall> nondiff,
        std::shared_ptr<const DiffCall> protos)
        : s_(std::move(s)), nondiff_(std::move(nondiff)), protos_(std::move(protos)) {}
    std::string repr() const override { return s_->fwd_name; }
    Traced fwd_jaxpr(std::span<const ShapedArray> primals,
                     std::span<const bool> perturbed) const override {
      Traced t;
      t.jaxpr = detail::trace_rule(
          primals,
          [&](std::span<const Array> in) {
            detail::SymbolicZeroScope scope;
            for (size_t i = 0; i < in.size(); ++i)
              if (s_->symbolic_zeros && !perturbed[i]) scope.unperturbed(in[i]);
            return s_->fwd(Sig::merge(*nondiff_, detail::rebuild(*protos_, in)), &t.num_res);
          },
          "the fwd rule of custom_vjp function " + s_->name, s_->fwd_name);
      return t;
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const NondiffCall> nondiff_;
    std::shared_ptr<const DiffCall> protos_;
  };

  class Bwd : public CustomVjpBwd {
   public:
    Bwd(std::shared_ptr<State> s, std::shared_ptr<const NondiffCall> nondiff,
        std::shared_ptr<const R> out_proto)
        : s_(std::move(s)), nondiff_(std::move(nondiff)), out_proto_(std::move(out_proto)) {}
    std::string repr() const override { return s_->bwd_name; }
    Jaxpr bwd_jaxpr(std::span<const ShapedArray> residuals, std::span<const ShapedArray> cts,
                    std::span<const bool> zeros) const override {
      std::vector<ShapedArray> avals(residuals.begin(), residuals.end());
      for (size_t i = 0; i < cts.size(); ++i)
        if (!zeros[i]) avals.push_back(cts[i]);
      const size_t n = residuals.size();
      return detail::trace_rule(
          avals,
          [&](std::span<const Array> in) {
            detail::SymbolicZeroScope scope;
            const std::vector<Array> given =
                detail::with_symbolic_zeros(in.subspan(n), cts, zeros, scope);
            return s_->bwd(*nondiff_, in.first(n), tree_unflatten(*out_proto_, given));
          },
          "the bwd rule of custom_vjp function " + s_->name, s_->bwd_name);
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const NondiffCall> nondiff_;
    std::shared_ptr<const R> out_proto_;
  };

  std::shared_ptr<State> state_;
};

template <class R, class... Args>
using CustomJvp = BasicCustomJvp<NondiffArgnums<>, R, Args...>;
template <class R, class... Args>
using CustomVjp = BasicCustomVjp<NondiffArgnums<>, R, Args...>;

namespace detail {
template <class Nondiff, class Sig>
struct CustomTypes;
template <class Nondiff, class R, class... Args>
struct CustomTypes<Nondiff, std::function<R(Args...)>> {
  using Jvp = BasicCustomJvp<Nondiff, R, Args...>;
  using Vjp = BasicCustomVjp<Nondiff, R, Args...>;
};
}  // namespace detail

// jax.custom_jvp(f): `name` is what the jaxpr prints (JAX: f's name; `<lambda>` for lambdas).
// f is a function, or a lambda that is not generic (its signature is deduced).
template <class F>
auto custom_jvp(F f, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<NondiffArgnums<>, decltype(std::function{f})>;
  return typename Types::Jvp(std::function{f}, std::move(name));
}
// jax.custom_jvp(f, nondiff_argnums=(0,)): custom_jvp(f, cjax::nondiff_argnums<0>, name).
template <class F, size_t... N>
auto custom_jvp(F f, NondiffArgnums<N...>, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<NondiffArgnums<N...>, decltype(std::function{f})>;
  return typename Types::Jvp(std::function{f}, std::move(name));
}

// jax.custom_vjp(f) and jax.custom_vjp(f, nondiff_argnums=...), likewise.
template <class F>
auto custom_vjp(F f, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<NondiffArgnums<>, decltype(std::function{f})>;
  return typename Types::Vjp(std::function{f}, std::move(name));
}
template <class F, size_t... N>
auto custom_vjp(F f, NondiffArgnums<N...>, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<NondiffArgnums<N...>, decltype(std::function{f})>;
  return typename Types::Vjp(std::function{f}, std::move(name));
}

}  // namespace cjax
