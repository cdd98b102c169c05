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
// (primal outputs, tangent outputs). A custom_vjp's fwd takes the arguments and returns the pair
// (outputs, residuals: any pytree), its bwd takes (residuals, output cotangents) and returns one
// cotangent per argument (a tuple of them, or the one). jvp of a custom_vjp function fails, as in
// JAX. Rules may not capture arrays (pass them as arguments); C++ numbers are fine.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <mutex>
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

namespace detail {

// The function's trace as call_jaxpr: captured values become the leading operands (num_consts).
struct CustomBody {
  JaxprRef jaxpr;
  std::vector<Array> consts;
};
CustomBody custom_body(ClosedTrace closed);

// Traces `body` (flat tracers -> flat outputs) over flat trees of these avals, as a fresh trace
// (outer traces hidden), into a jaxpr that captures nothing; `what` names the rule in the error.
using FlatBody = std::function<std::vector<Array>(std::span<const Array>)>;
Jaxpr trace_rule(std::span<const ShapedArray> avals, const FlatBody& body, const std::string& what);

// Binds custom_jvp_call or custom_vjp_call on the consts and the argument leaves.
std::vector<Array> bind_custom_call(const char* prim, const CustomBody& body,
                                    std::span<const Array> leaves, Params params,
                                    const SourceInfo& src);

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

}  // namespace detail

// jax.custom_jvp for a function of signature R(Args...).
template <class R, class... Args>
class CustomJvp {
 public:
  using Call = std::tuple<std::decay_t<Args>...>;
  using Rule = std::function<std::pair<R, R>(const Call& primals, const Call& tangents)>;

  CustomJvp(std::function<R(Args...)> f, std::string name)
      : state_(std::make_shared<State>(State{std::move(f), std::move(name), {}, {}})) {}

  // The rule; `rule_name` is what the jaxpr prints as `jvp=` (JAX: the rule's function name).
  CustomJvp& defjvp(Rule rule, std::string rule_name = "<lambda>") {
    state_->rule = std::move(rule);
    state_->rule_name = std::move(rule_name);
    return *this;
  }

  R operator()(const std::decay_t<Args>&... args,
               SourceInfo src = std::source_location::current()) const {
    if (!state_->rule)
      throw UsageError("No JVP defined for custom_jvp function " + state_->name + " using defjvp.");
    Call call(args...);
    const std::vector<Array> leaves = detail::tuple_leaves(call);
    auto protos = std::make_shared<const Call>(call);
    std::optional<R> proto;
    ClosedTrace closed = trace_to_jaxpr(
        [&](std::span<const Array> tracers) {
          R r = std::apply(state_->f, detail::rebuild(*protos, tracers));
          std::vector<Array> out = detail::leaves_of(r);
          proto.emplace(std::move(r));
          return out;
        },
        avals_of(leaves));
    const detail::CustomBody body = detail::custom_body(std::move(closed));
    auto rule = std::make_shared<const JvpRule>(state_, protos);
    Params p{{"name", state_->name},
             {"call_jaxpr", body.jaxpr},
             {"jvp", ObjectRef(rule)},
             {"num_consts", int64_t(body.consts.size())},
             {"symbolic_zeros", false}};
    return tree_unflatten(
        *proto, detail::bind_custom_call("custom_jvp_call", body, leaves, std::move(p), src));
  }

 private:
  struct State {
    std::function<R(Args...)> f;
    std::string name;
    Rule rule;
    std::string rule_name;
  };

  // The rule, for one call's argument structure.
  class JvpRule : public CustomJvpRule {
   public:
    JvpRule(std::shared_ptr<State> s, std::shared_ptr<const Call> protos)
        : s_(std::move(s)), protos_(std::move(protos)) {}
    std::string repr() const override { return s_->rule_name; }
    Jaxpr jvp_jaxpr(std::span<const ShapedArray> primals) const override {
      std::vector<ShapedArray> avals(primals.begin(), primals.end());
      avals.insert(avals.end(), primals.begin(), primals.end());
      const size_t n = primals.size();
      return detail::trace_rule(
          avals,
          [&](std::span<const Array> in) {
            auto [p, t] = s_->rule(detail::rebuild(*protos_, in.first(n)),
                                   detail::rebuild(*protos_, in.subspan(n)));
            std::vector<Array> out = detail::leaves_of(p), touts = detail::leaves_of(t);
            out.insert(out.end(), touts.begin(), touts.end());
            return out;
          },
          "the jvp rule of custom_jvp function " + s_->name);
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const Call> protos_;
  };

  static std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
    std::vector<ShapedArray> out;
    for (const Array& x : xs) out.push_back(x.aval());
    return out;
  }

  std::shared_ptr<State> state_;
};

// jax.custom_vjp for a function of signature R(Args...).
template <class R, class... Args>
class CustomVjp {
 public:
  using Call = std::tuple<std::decay_t<Args>...>;

  CustomVjp(std::function<R(Args...)> f, std::string name) : state_(std::make_shared<State>()) {
    state_->f = std::move(f);
    state_->name = std::move(name);
  }

  // fwd(args...) -> std::pair{outputs, residuals}; bwd(residuals, output cotangents) -> one
  // cotangent per argument (a tuple, or the one). The names are what the jaxpr prints.
  template <class Fwd, class Bwd>
  CustomVjp& defvjp(Fwd fwd, Bwd bwd, std::string fwd_name = "<lambda>",
                    std::string bwd_name = "<lambda>") {
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
    state_->bwd = [bwd, res_proto, mu](std::span<const Array> res, const R& ct) {
      std::optional<Res> r;
      {
        std::lock_guard lock(*mu);
        if (!*res_proto) throw Error("custom_vjp: bwd traced before fwd");
        r.emplace(tree_unflatten(**res_proto, res));
      }
      return detail::leaves_of(bwd(*r, ct));
    };
    state_->fwd_name = std::move(fwd_name);
    state_->bwd_name = std::move(bwd_name);
    return *this;
  }

  R operator()(const std::decay_t<Args>&... args,
               SourceInfo src = std::source_location::current()) const {
    if (!state_->fwd)
      throw UsageError("No VJP defined for custom_vjp function " + state_->name + " using defvjp.");
    Call call(args...);
    const std::vector<Array> leaves = detail::tuple_leaves(call);
    auto protos = std::make_shared<const Call>(call);
    std::optional<R> proto;
    std::vector<ShapedArray> avals;
    for (const Array& x : leaves) avals.push_back(x.aval());
    ClosedTrace closed = trace_to_jaxpr(
        [&](std::span<const Array> tracers) {
          R r = std::apply(state_->f, detail::rebuild(*protos, tracers));
          std::vector<Array> out = detail::leaves_of(r);
          proto.emplace(std::move(r));
          return out;
        },
        avals);
    const detail::CustomBody body = detail::custom_body(std::move(closed));
    auto out_proto = std::make_shared<const R>(*proto);
    Params p{{"name", state_->name},
             {"bwd", ObjectRef(std::make_shared<const Bwd>(state_, out_proto))},
             {"call_jaxpr", body.jaxpr},
             {"fwd", ObjectRef(std::make_shared<const Fwd>(state_, protos))},
             {"num_consts", int64_t(body.consts.size())},
             {"symbolic_zeros", false}};
    return tree_unflatten(
        *proto, detail::bind_custom_call("custom_vjp_call", body, leaves, std::move(p), src));
  }

 private:
  struct State {
    std::function<R(Args...)> f;
    std::string name;
    std::function<std::vector<Array>(const Call&, size_t*)> fwd;
    std::function<std::vector<Array>(std::span<const Array>, const R&)> bwd;
    std::string fwd_name, bwd_name;
  };

  class Fwd : public CustomVjpFwd {
   public:
    Fwd(std::shared_ptr<State> s, std::shared_ptr<const Call> protos)
        : s_(std::move(s)), protos_(std::move(protos)) {}
    std::string repr() const override { return s_->fwd_name; }
    Traced fwd_jaxpr(std::span<const ShapedArray> primals) const override {
      Traced t;
      t.jaxpr = detail::trace_rule(
          primals,
          [&](std::span<const Array> in) {
            return s_->fwd(detail::rebuild(*protos_, in), &t.num_res);
          },
          "the fwd rule of custom_vjp function " + s_->name);
      return t;
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const Call> protos_;
  };

  class Bwd : public CustomVjpBwd {
   public:
    Bwd(std::shared_ptr<State> s, std::shared_ptr<const R> out_proto)
        : s_(std::move(s)), out_proto_(std::move(out_proto)) {}
    std::string repr() const override { return s_->bwd_name; }
    Jaxpr bwd_jaxpr(std::span<const ShapedArray> residuals,
                    std::span<const ShapedArray> cotangents) const override {
      std::vector<ShapedArray> avals(residuals.begin(), residuals.end());
      avals.insert(avals.end(), cotangents.begin(), cotangents.end());
      const size_t n = residuals.size();
      return detail::trace_rule(
          avals,
          [&](std::span<const Array> in) {
            return s_->bwd(in.first(n), tree_unflatten(*out_proto_, in.subspan(n)));
          },
          "the bwd rule of custom_vjp function " + s_->name);
    }

   private:
    std::shared_ptr<State> s_;
    std::shared_ptr<const R> out_proto_;
  };

  std::shared_ptr<State> state_;
};

namespace detail {
template <class Sig>
struct CustomTypes;
template <class R, class... Args>
struct CustomTypes<std::function<R(Args...)>> {
  using Jvp = CustomJvp<R, Args...>;
  using Vjp = CustomVjp<R, Args...>;
};
}  // namespace detail

// jax.custom_jvp(f): `name` is what the jaxpr prints (JAX: f's name; `<lambda>` for lambdas).
// f is a function, or a lambda that is not generic (its signature is deduced).
template <class F>
auto custom_jvp(F f, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<decltype(std::function{f})>;
  return typename Types::Jvp(std::function{f}, std::move(name));
}

// jax.custom_vjp(f), likewise.
template <class F>
auto custom_vjp(F f, std::string name = "<lambda>") {
  using Types = detail::CustomTypes<decltype(std::function{f})>;
  return typename Types::Vjp(std::function{f}, std::move(name));
}

}  // namespace cjax
