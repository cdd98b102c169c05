// jvp / vjp of the reductions, cumulative reductions and dot_general.
#include "ad_rules_check.h"

using namespace cjax;
using namespace cjax::adtest;

namespace {

// Random axes of a rank-`rank` shape (possibly none).
std::vector<int64_t> random_axes(Rng& rng, size_t rank) {
  std::vector<int64_t> axes;
  for (size_t d = 0; d < rank; ++d)
    if (std::uniform_int_distribution<int>(0, 1)(rng)) axes.push_back(int64_t(d));
  return axes;
}

}  // namespace

TEST_CASE("ad rules: reduce_sum is linear") {
  Rng rng(401);
  for (int s = 0; s < 4; ++s) {
    std::vector<Arg> args{f64(random_shape(rng))};
    std::vector<int64_t> axes = random_axes(rng, args[0].aval.shape.size());
    Jaxpr f = one_eqn("reduce_sum", args, lax_params::reduce(axes));
    check_jvp_vjp(f, args, rng);
    check_linear(f, args, {true}, rng);
  }
}

TEST_CASE("ad rules: reduce_max and reduce_min, including ties") {
  Rng rng(402);
  for (const char* prim : {"reduce_max", "reduce_min"})
    for (int s = 0; s < 3; ++s) {
      std::vector<Arg> args{f64(random_nonscalar_shape(rng))};
      std::vector<int64_t> axes = random_axes(rng, args[0].aval.shape.size());
      INFO(prim << " over " << shape_str(axes) << " of " << args[0].aval.str_short());
      check_jvp_vjp(one_eqn(prim, args, lax_params::reduce(axes)), args, rng);
    }
  // Two maxima share the tangent: the mean of their tangents.
  std::vector<Arg> args{f64({4})};
  Jaxpr f = one_eqn("reduce_max", args, lax_params::reduce({0}));
  JvpJaxpr jvp = jvp_jaxpr(f, {true}, true);
  std::vector<Buffer> out = eval(jvp.jaxpr, {from_doubles(args[0].aval, {1, 3, 0, 3}),
                                             from_doubles(args[0].aval, {7, 2, 9, 4})});
  check_close(out[1], {3}, 1e-15, "tied reduce_max tangent");
}

TEST_CASE("ad rules: reduce_prod (a product tree, as JAX differentiates it)") {
  Rng rng(403);
  for (Shape shape : {Shape{5}, Shape{2, 3}, Shape{3, 1, 4}, Shape{}})
    for (int s = 0; s < 2; ++s) {
      std::vector<Arg> args{f64_pm(shape, 0.5, 1.5)};
      std::vector<int64_t> axes = random_axes(rng, shape.size());
      INFO("reduce_prod over " << shape_str(axes) << " of " << args[0].aval.str_short());
      check_jvp_vjp(one_eqn("reduce_prod", args, {{"axes", ParamValue::ints(axes)}}), args, rng);
    }
}

TEST_CASE("ad rules: cumsum is linear, cumprod, cummax, cummin, cumlogsumexp in both directions") {
  Rng rng(404);
  for (bool reverse : {false, true})
    for (Shape shape : {Shape{1}, Shape{2}, Shape{5}, Shape{3, 4}, Shape{2, 7}}) {
      int64_t axis = int64_t(shape.size()) - 1 - (shape.size() > 1 && reverse ? 1 : 0);
      Params p = lax_params::cumulative(axis, reverse);
      std::vector<Arg> args{f64_pm(shape, 0.5, 1.5)};
      INFO("axis " << axis << " reverse " << reverse << " of " << args[0].aval.str_short());
      Jaxpr sum = one_eqn("cumsum", args, p);
      check_jvp_vjp(sum, args, rng, 1);
      check_linear(sum, args, {true}, rng, 1);
      for (const char* prim : {"cumprod", "cummax", "cummin", "cumlogsumexp"}) {
        INFO(prim);
        check_jvp_vjp(one_eqn(prim, args, p), args, rng, 1);
      }
    }
}

TEST_CASE("ad rules: dot_general with batch and contracting dims") {
  Rng rng(405);
  struct Case {
    Shape x, y;
    DotDimensionNumbers dn;
  };
  for (const Case& c :
       {Case{{5, 4}, {4}, {{1}, {0}, {}, {}}}, Case{{3, 4}, {4, 2}, {{1}, {0}, {}, {}}},
        Case{{4, 3}, {2, 4}, {{0}, {1}, {}, {}}}, Case{{2, 3, 4}, {2, 4, 5}, {{2}, {1}, {0}, {0}}},
        Case{{3}, {2}, {{}, {}, {}, {}}}}) {
    std::vector<Arg> args{f64(c.x), f64(c.y)};
    Jaxpr f = one_eqn("dot_general", args, lax_params::dot_general(c.dn, NoneParam{}));
    INFO(program(f));
    check_jvp_vjp(f, args, rng);
    check_linear(f, args, {true, false}, rng);
    check_linear(f, args, {false, true}, rng);
  }
  // Contracting two dims at once, with a batch dim in the middle.
  std::vector<Arg> args{f64({3, 2, 4}), f64({4, 3, 2, 5})};
  Jaxpr f = one_eqn("dot_general", args,
                    lax_params::dot_general({{0, 2}, {1, 0}, {1}, {2}}, NoneParam{}));
  check_jvp_vjp(f, args, rng);
  check_linear(f, args, {true, false}, rng);
  check_linear(f, args, {false, true}, rng);
}
