// Control flow: cond, while, scan (jax/_src/lax/control_flow/). Each is typed by its jaxprs.
#include <fmt/format.h>

#include <algorithm>

#include "ir/rules/rule_util.h"
#include "ir/rules/table.h"
#include "ir/sub_jaxprs.h"

namespace cjax {
namespace {

using namespace rules;

int64_t count_param(std::string_view prim, const Params& params, std::string_view key) {
  int64_t n = int_param(prim, params, key);
  if (n < 0) fail(prim, fmt::format("param '{}' must be non-negative, got {}", key, n));
  return n;
}

// Whether `in` has at least a + b operands, for counts a and b read from params (their sum may
// overflow int64; the messages print it as unsigned, which cannot).
bool has_operands(Avals in, int64_t a, int64_t b) {
  auto n = static_cast<int64_t>(in.size());
  return a <= n && b <= n - a;
}
uint64_t sum(int64_t a, int64_t b) {
  return static_cast<uint64_t>(a) + static_cast<uint64_t>(b);
}

AvalList concat(Avals a, Avals b) {
  AvalList out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// cond[branches]: operands are the branch index (a scalar int32, or bool with two branches)
// and the branches' inputs. Every branch has the same signature.
AvalList cond_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "cond";
  expect_min_arity(kPrim, in, 1);
  std::vector<const Jaxpr*> branches = jaxprs_param(kPrim, params, "branches");
  if (branches.empty()) fail(kPrim, "needs at least one branch");
  if (!in[0].shape.empty() || (in[0].dtype != DType::i32 && in[0].dtype != DType::bool_))
    fail_got(kPrim, "the index must be a scalar int32 or bool", in);
  if (in[0].dtype == DType::bool_ && branches.size() != 2)
    fail_got(kPrim, "a bool index needs exactly 2 branches", in);
  Avals operands = in.subspan(1);
  AvalList out0 = jaxpr_out_avals(kPrim, "branch 0", *branches[0]);
  for (size_t b = 0; b < branches.size(); ++b) {
    std::string what = fmt::format("branch {}", b);
    expect_types(kPrim, what, jaxpr_in_avals(kPrim, what, *branches[b]), operands);
    AvalList out = jaxpr_out_avals(kPrim, what, *branches[b]);
    bool same = out.size() == out0.size();
    for (size_t i = 0; same && i < out.size(); ++i) same = out[i].same_type(out0[i]);
    if (!same)
      fail(kPrim, fmt::format("branch {} returns ({}) but branch 0 returns ({})", b, avals_str(out),
                              avals_str(out0)));
  }
  return out0;
}

// while[cond_jaxpr body_jaxpr cond_nconsts body_nconsts]: operands are the cond consts, the body
// consts and the initial carry; cond maps (cond consts, carry) to a bool scalar, body maps
// (body consts, carry) to the next carry. A batched loop (vmap's) has a predicate of shape
// bool[B...], a prefix of every carry's shape: it runs while any element is true, and each
// carry's entries under a false one keep their value.
AvalList while_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "while";
  const Jaxpr& cond = jaxpr_param(kPrim, params, "cond_jaxpr");
  const Jaxpr& body = jaxpr_param(kPrim, params, "body_jaxpr");
  int64_t cond_n = count_param(kPrim, params, "cond_nconsts");
  int64_t body_n = count_param(kPrim, params, "body_nconsts");
  if (!has_operands(in, cond_n, body_n))
    fail_got(kPrim,
             fmt::format("expects at least {} operands for cond_nconsts={} body_nconsts={}",
                         sum(cond_n, body_n), cond_n, body_n),
             in);
  Avals cond_consts = in.subspan(0, cond_n);
  Avals body_consts = in.subspan(cond_n, body_n);
  Avals carry = in.subspan(cond_n + body_n);
  expect_types(kPrim, "cond_jaxpr", jaxpr_in_avals(kPrim, "cond_jaxpr", cond),
               concat(cond_consts, carry));
  expect_types(kPrim, "body_jaxpr", jaxpr_in_avals(kPrim, "body_jaxpr", body),
               concat(body_consts, carry));
  AvalList pred = jaxpr_out_avals(kPrim, "cond_jaxpr", cond);
  if (pred.size() != 1 || pred[0].dtype != DType::bool_)
    fail(kPrim, fmt::format("cond_jaxpr must return one bool[], returns ({})", avals_str(pred)));
  for (const ShapedArray& c : carry) {
    const Shape& p = pred[0].shape;
    if (p.size() > c.shape.size() || !std::equal(p.begin(), p.end(), c.shape.begin()))
      fail(kPrim, fmt::format("cond_jaxpr returns {}, whose shape is not a prefix of the carry's "
                              "({})",
                              pred[0].str_short(), avals_str(carry)));
  }
  AvalList out = jaxpr_out_avals(kPrim, "body_jaxpr", body);
  bool same = out.size() == carry.size();
  for (size_t i = 0; same && i < out.size(); ++i) same = out[i].same_type(carry[i]);
  if (!same)
    fail(kPrim, fmt::format("body_jaxpr returns ({}) for the carry ({})", avals_str(out),
                            avals_str(carry)));
  return out;
}

// scan[jaxpr length reverse num_consts num_carry unroll]: operands are consts, the initial carry
// and the scanned-over xs (leading dimension `length`); the jaxpr maps (consts, carry, x slices)
// to (carry, y slices); the results are the final carry and the ys stacked along a new leading
// dimension.
AvalList scan_rule(Avals in, const Params& params) {
  constexpr std::string_view kPrim = "scan";
  const Jaxpr& jaxpr = jaxpr_param(kPrim, params, "jaxpr");
  int64_t length = count_param(kPrim, params, "length");
  int64_t num_consts = count_param(kPrim, params, "num_consts");
  int64_t num_carry = count_param(kPrim, params, "num_carry");
  bool_param(kPrim, params, "reverse");
  if (!has_operands(in, num_consts, num_carry))
    fail_got(kPrim,
             fmt::format("expects at least {} operands for num_consts={} num_carry={}",
                         sum(num_consts, num_carry), num_consts, num_carry),
             in);
  AvalList body_in(in.begin(), in.begin() + num_consts + num_carry);
  for (const ShapedArray& x : in.subspan(num_consts + num_carry)) {
    if (x.shape.empty() || x.shape[0] != length)
      fail_got(kPrim, fmt::format("scanned-over operands must have leading dimension {}", length),
               in);
    body_in.emplace_back(x.dtype, Shape(x.shape.begin() + 1, x.shape.end()), x.weak_type);
  }
  expect_types(kPrim, "the jaxpr", jaxpr_in_avals(kPrim, "the jaxpr", jaxpr), body_in);
  AvalList body_out = jaxpr_out_avals(kPrim, "the jaxpr", jaxpr);
  Avals carry_in = in.subspan(num_consts, num_carry);
  bool same = static_cast<int64_t>(body_out.size()) >= num_carry;
  for (int64_t i = 0; same && i < num_carry; ++i) same = body_out[i].same_type(carry_in[i]);
  if (!same)
    fail(kPrim, fmt::format("the jaxpr returns ({}) for the carry ({})", avals_str(body_out),
                            avals_str(carry_in)));
  AvalList out(body_out.begin(), body_out.begin() + num_carry);
  for (size_t i = num_carry; i < body_out.size(); ++i) {
    Shape shape{length};
    shape.insert(shape.end(), body_out[i].shape.begin(), body_out[i].shape.end());
    out.emplace_back(body_out[i].dtype, std::move(shape), body_out[i].weak_type);
  }
  return out;
}

// The trip count of a while loop is not known statically: its body and condition count once. A
// scan counts `length` bodies, a cond its most expensive branch.
double cond_flops(const Eqn& eqn, const std::function<double(const Jaxpr&)>& body_flops) {
  double f = 0;
  for (const Jaxpr* branch : sub_jaxprs(eqn)) f = std::max(f, body_flops(*branch));
  return f;
}

double while_flops(const Eqn& eqn, const std::function<double(const Jaxpr&)>& body_flops) {
  double f = 0;
  for (const Jaxpr* j : sub_jaxprs(eqn)) f += body_flops(*j);
  return f;
}

double scan_flops(const Eqn& eqn, const std::function<double(const Jaxpr&)>& body_flops) {
  const Jaxpr* body = eqn.params.get_jaxpr("jaxpr").get();
  return body ? static_cast<double>(eqn.params.get_int("length")) * body_flops(*body) : 0;
}

}  // namespace

void register_control_flow(PrimitiveTable& table) {
  // jax >= 0.4.31 no longer has cond's `linear`, so text from before drops it. scan's `linear` and
  // `_split_transpose` are kept when the text has them: jax 0.9.x, still the current text format,
  // prints them (wild-jaxprs/04), and jax 0.10 stopped binding them; cjax's tracer emits the 0.10
  // form (jax 0.11 restructured scan's params again, as `ft_in`/`ft_out`).
  Primitive cond = make_primitive("cond", cond_rule);
  cond.higher_order = true;
  cond.canonicalize_params = drop({"linear"});
  table.add(with_flop_rule(std::move(cond), cond_flops));

  Primitive loop = make_primitive("while", while_rule);
  loop.higher_order = true;
  table.add(with_flop_rule(std::move(loop), while_flops));

  Primitive scan = make_primitive("scan", scan_rule);
  scan.higher_order = true;
  table.add(with_flop_rule(std::move(scan), scan_flops));
}

}  // namespace cjax
