#include "passes/batched_while.h"

#include <numeric>

#include "ir/sub_jaxprs.h"
#include "passes/builder.h"
#include "passes/inline.h"
#include "passes/lax/lax.h"

namespace cjax {
namespace {

bool is_batched_while(const Eqn& e) {
  return e.prim->name == "while" &&
         e.params.get_jaxpr("cond_jaxpr")->outvars.at(0).aval().rank() > 0;
}

std::vector<Var> fresh_vars(std::span<const Var> like) {
  std::vector<Var> out;
  for (const Var& v : like) out.emplace_back(v.aval());
  return out;
}

// (cond consts, carry) -> whether any example goes on.
Jaxpr any_cond(const Jaxpr& cond) {
  JaxprBuilder b;
  std::vector<Var> in = fresh_vars(cond.invars);
  const Atom pred = inline_jaxpr(b, cond, {}, std::vector<Atom>(in.begin(), in.end())).at(0);
  std::vector<int64_t> axes(static_cast<size_t>(pred.aval().rank()));
  std::iota(axes.begin(), axes.end(), 0);
  const Atom any = lax_ops::emit1(b, "reduce_or", {pred}, lax_params::reduce(axes));
  return b.build(std::move(in), {any});
}

// (cond consts, body consts, carry) -> the body's carry where the predicate holds, the old one
// elsewhere.
Jaxpr select_body(const Jaxpr& cond, const Jaxpr& body, size_t cn, size_t bn) {
  JaxprBuilder b;
  std::vector<Var> cconsts = fresh_vars(std::span(cond.invars).first(cn));
  std::vector<Var> bconsts = fresh_vars(std::span(body.invars).first(bn));
  std::vector<Var> carry = fresh_vars(std::span(body.invars).subspan(bn));
  std::vector<Atom> cond_in(cconsts.begin(), cconsts.end()),
      body_in(bconsts.begin(), bconsts.end());
  cond_in.insert(cond_in.end(), carry.begin(), carry.end());
  body_in.insert(body_in.end(), carry.begin(), carry.end());
  const Atom pred = inline_jaxpr(b, cond, {}, cond_in).at(0);
  std::vector<Atom> next = inline_jaxpr(b, body, {}, body_in);
  std::vector<int64_t> prefix(static_cast<size_t>(pred.aval().rank()));
  std::iota(prefix.begin(), prefix.end(), 0);
  std::vector<Atom> out;
  for (size_t i = 0; i < carry.size(); ++i) {
    const Atom which = lax_ops::broadcast_in_dim(b, pred, carry[i].aval().shape, prefix);
    out.push_back(lax_ops::select_n(b, which, {Atom(carry[i]), next[i]}));
  }
  std::vector<Var> in = cconsts;
  in.insert(in.end(), bconsts.begin(), bconsts.end());
  in.insert(in.end(), carry.begin(), carry.end());
  return b.build(std::move(in), std::move(out));
}

Eqn rewrite(const Eqn& e) {
  const Jaxpr& cond = *e.params.get_jaxpr("cond_jaxpr");
  const Jaxpr& body = *e.params.get_jaxpr("body_jaxpr");
  const auto cn = static_cast<size_t>(e.params.get_int("cond_nconsts"));
  const auto bn = static_cast<size_t>(e.params.get_int("body_nconsts"));
  Eqn out = e;
  out.params.set("cond_jaxpr", JaxprRef(std::make_shared<const Jaxpr>(any_cond(cond))));
  out.params.set("body_jaxpr",
                 JaxprRef(std::make_shared<const Jaxpr>(select_body(cond, body, cn, bn))));
  out.params.set("body_nconsts", static_cast<int64_t>(cn + bn));
  // The body reads the cond consts too: they are passed twice.
  out.inputs.insert(out.inputs.begin() + static_cast<std::ptrdiff_t>(cn), e.inputs.begin(),
                    e.inputs.begin() + static_cast<std::ptrdiff_t>(cn));
  return out;
}

bool has_batched_while(const Jaxpr& j) {
  for (const Eqn& e : j.eqns) {
    if (is_batched_while(e)) return true;
    for (const Jaxpr* sub : sub_jaxprs(e))
      if (has_batched_while(*sub)) return true;
  }
  return false;
}

}  // namespace

Jaxpr unbatch_while_predicates(const Jaxpr& jaxpr) {
  if (!has_batched_while(jaxpr)) return jaxpr;
  Jaxpr out = jaxpr;
  for (Eqn& e : out.eqns) {
    e.params = map_sub_jaxprs(e.params, unbatch_while_predicates);
    if (is_batched_while(e)) e = rewrite(e);
  }
  return out;
}

}  // namespace cjax
