// dce through scan and cond (a fixpoint over the carries a needed carry depends on), and cjax's
// own control-flow jaxprs, including the forward and backward programs of their vjps, printed,
// parsed back and printed again byte for byte.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cjax/api.h"
#include "examples/registry.h"
#include "ir/parse/parser.h"
#include "ir/print/printer.h"
#include "ir/rules/verify.h"
#include "passes/dce.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"

using namespace cjax;

namespace {

const Eqn& only_eqn(const Jaxpr& j, const std::string& prim) {
  const Eqn* found = nullptr;
  for (const Eqn& e : j.eqns)
    if (e.prim->name == prim) found = &e;
  REQUIRE(found);
  return *found;
}

}  // namespace

TEST_CASE("dce: unused scan outputs, and the carries only they need, are removed") {
  // Carries (a, b, c): a feeds b; c is independent. Only b's final value is used: a must stay
  // (b reads it), c and the ys go.
  auto f = [](const Array& a0, const Array& b0, const Array& c0, const Array& xs) {
    using C = std::tuple<Array, Array, Array>;
    auto step = [](const C& c, const Array& x) {
      auto [a, b, cc] = c;
      return std::pair<C, Array>{C{np::sin(a) + x, b * a, cc * 2.0}, np::exp(x)};
    };
    auto [carry, ys] = scan(step, C{a0, b0, c0}, xs);
    return std::get<1>(carry);
  };
  ShapeDtype s{DType::f32, {2}}, xs{DType::f32, {5, 2}};
  Jaxpr j = make_jaxpr(f)(s, s, s, xs);
  Jaxpr pruned = dce(j);
  verify(pruned);
  const Eqn& scan = only_eqn(pruned, "scan");
  CHECK(scan.params.get_int("num_carry") == 2);
  CHECK(scan.outputs.size() == 2);
  std::string body = to_string(*scan.params.get_jaxpr("jaxpr"));
  CHECK(body.find("exp") == std::string::npos);
  CHECK(body.find("2.0") == std::string::npos);
  // Same values as the original program.
  Array a0 = np::ones({2}), b0 = np::full({2}, 0.5), c0 = np::ones({2});
  Array x = np::arange(10).astype(DType::f32).reshape({5, 2}) * 0.1;
  std::vector<runtime::Buffer> in{a0.buffer(), b0.buffer(), c0.buffer(), x.buffer()};
  CHECK(runtime::eval_jaxpr(pruned, in)[0].to_doubles() ==
        runtime::eval_jaxpr(j, in)[0].to_doubles());
}

TEST_CASE("dce: a scan of one step does not compute a carry nobody reads") {
  // Only ys, which read the old carry: a longer scan needs each new carry for the next step; a
  // scan of one step passes the carry through instead of computing sin(h) * 3.
  auto f = [](const Array& h0, const Array& xs) {
    auto step = [](const Array& h, const Array& x) {
      return std::pair<Array, Array>{np::sin(h) * 3.0, h * x};
    };
    return scan(step, h0, xs).second;
  };
  ShapeDtype s{DType::f32, {2}};
  for (int64_t length : {1, 2}) {
    INFO(length << " steps");
    Jaxpr j = make_jaxpr(f)(s, ShapeDtype{DType::f32, {length, 2}});
    Jaxpr pruned = dce(j);
    verify(pruned);
    const std::string body = to_string(*only_eqn(pruned, "scan").params.get_jaxpr("jaxpr"));
    CHECK((body.find("sin") == std::string::npos) == (length == 1));
    Array h0 = np::full({2}, 0.5), xs = np::ones({length, 2}) * 2.0;
    std::vector<runtime::Buffer> in{h0.buffer(), xs.buffer()};
    CHECK(runtime::eval_jaxpr(pruned, in)[0].to_doubles() ==
          runtime::eval_jaxpr(j, in)[0].to_doubles());
  }
}

TEST_CASE("dce: a cond keeps the operands some branch needs") {
  auto f = [](const Array& p, const Array& x, const Array& y, const Array& z) {
    auto [u, v] = cond(
        p,
        [](const Array& a, const Array& b, const Array&) {
          return std::pair{a * b, a};
        },
        [](const Array& a, const Array&, const Array& c) {
          return std::pair{a, np::sin(c)};
        },
        x, y, z);
    return u;
  };
  ShapeDtype s{DType::f32, {3}};
  Jaxpr pruned = dce(make_jaxpr(f)(ShapeDtype{DType::bool_, {}}, s, s, s));
  verify(pruned);
  const Eqn& c = only_eqn(pruned, "cond");
  CHECK(c.outputs.size() == 1);
  CHECK(c.inputs.size() == 3);  // the index, x and y; z only fed the dropped output
}

TEST_CASE("print/parse: traced scan, cond and while, and their vjp programs, round-trip") {
  std::vector<std::string> texts;
  for (const char* name :
       {"scan/net", "scan/net_checkpoint", "cond/branches", "loop/fori", "scan/net_deep"}) {
    Jaxpr j = examples::get(name).make_jaxpr();
    texts.push_back(to_string(j));
    VjpResult v = vjp_jaxpr(j);
    texts.push_back(to_string(v.fwd));
    texts.push_back(to_string(v.bwd));
  }
  auto newton = [](const Array& a) {
    return while_loop([](const Array& x) { return x > 1.0; },
                      [](const Array& x) { return x * 0.5; }, a);
  };
  texts.push_back(to_string(make_jaxpr(newton)(ShapeDtype{DType::f32, {}})));
  for (const std::string& t : texts) {
    INFO(t);
    JaxprRef parsed = parse_jaxpr(t);
    CHECK_NOTHROW(verify(*parsed));
    CHECK(to_string(*parsed) == t);
  }
}
