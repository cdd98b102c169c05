// make_jaxpr(grad(f)) as JAX prints it, rebuilt from vjp: the forward program, then the backward
// program with its residuals wired to the forward's and the output cotangent the literal 1.0
// (what grad feeds in). The expected texts are real JAX outputs from the shared reference corpus
// (wild-jaxprs/02, 18 and 15); the tests skip when the corpus is absent.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "passes/vjp.h"

using namespace cjax;

namespace {

std::optional<std::string> read_corpus(const std::string& name) {
  std::filesystem::path p =
      std::filesystem::path(CJAX_SHARED_DIR) / "reference" / "wild-jaxprs" / name;
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// grad(f) for a scalar-output f, differentiating the inputs marked in `argnums` (the others are
// treated as constants, as grad's argnums does).
Jaxpr grad_program(const Jaxpr& f, const std::vector<bool>& argnums) {
  Jaxpr g = f;
  g.invars.clear();
  for (size_t i = 0; i < f.invars.size(); ++i)
    (argnums[i] ? g.invars : g.constvars).push_back(f.invars[i]);
  VjpResult r = vjp_jaxpr(g);
  size_t nout = f.outvars.size();
  REQUIRE(nout == 1);

  std::unordered_map<Var, Atom, VarHash> env;
  for (size_t k = 0; k < r.num_residuals; ++k)
    env.emplace(r.bwd.invars[k], r.fwd.outvars[nout + k]);
  env.emplace(r.bwd.invars[r.num_residuals], Literal::of(1.0, f.outvars[0].aval().dtype));
  auto subst = [&](const Atom& a) -> Atom {
    if (a.is_literal()) return a;
    auto it = env.find(a.var());
    return it == env.end() ? a : it->second;
  };
  Jaxpr out;
  out.invars = f.invars;
  out.eqns = r.fwd.eqns;
  for (Eqn e : r.bwd.eqns) {
    for (Atom& in : e.inputs) in = subst(in);
    out.eqns.push_back(std::move(e));
  }
  for (const Atom& o : r.bwd.outvars) out.outvars.push_back(subst(o));
  return out;
}

}  // namespace

TEST_CASE("golden: grad of shifted_square_sum is JAX's (wild-jaxprs 01 -> 02)") {
  auto fwd = read_corpus("01_jaxpathways_forward_reduce_sum.jaxpr");
  auto grad = read_corpus("02_jaxpathways_grad_add_any.jaxpr");
  if (!fwd || !grad) {
    WARN("reference corpus not found under " CJAX_SHARED_DIR "; skipped");
    return;
  }
  JaxprRef f = parse_jaxpr(*fwd);
  CHECK(to_string(grad_program(*f, {true})) == *grad);
}

TEST_CASE("golden: grad of sin(cos(x)) is JAX's (wild-jaxprs 17 -> 18)") {
  auto fwd = read_corpus("17_api_docstring_oneliner.jaxpr");
  auto grad = read_corpus("18_api_docstring_grad_dropvar.jaxpr");
  if (!fwd || !grad) {
    WARN("reference corpus not found under " CJAX_SHARED_DIR "; skipped");
    return;
  }
  JaxprRef f = parse_jaxpr(*fwd);
  CHECK(to_string(grad_program(*f, {true})) == *grad);
}

TEST_CASE("golden: grad of sum(dot(x, w)) wrt w is JAX's (wild-jaxprs 15)") {
  auto grad = read_corpus("15_precision_grad_dot_transpose.jaxpr");
  if (!grad) {
    WARN("reference corpus not found under " CJAX_SHARED_DIR "; skipped");
    return;
  }
  // make_jaxpr(loss) for loss(x, w) = jnp.sum(jnp.dot(x, w, precision='BF16_BF16_F32')).
  JaxprRef f = parse_jaxpr(R"({ lambda ; a:f32[4,8] b:f32[8,2]. let
    c:f32[4,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] a b
    d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
  in (d,) })");
  CHECK(to_string(grad_program(*f, {false, true})) == *grad);
}
