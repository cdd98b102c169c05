// What the docs' C++ spells with a cjax:: prefix is declared by <cjax/cjax.h> alone, as a user
// of the installed library includes it: the checkpoint policies (memory_budget too) and grad's
// options.
#include <cjax/cjax.h>

#include <catch2/catch.hpp>

namespace {

namespace np = cjax::numpy;
using cjax::Array;

Array sum_sin_dot(const Array& W, const Array& x) {
  return np::sum(np::sin(np::dot(W, x)));
}

}  // namespace

TEST_CASE("<cjax/cjax.h> declares the checkpoint policies and grad's options") {
  std::vector<cjax::PolicyRef> policies = {
      cjax::policies::everything_saveable(),
      cjax::policies::dots_with_no_batch_dims_saveable(),
      cjax::policies::save_only_these_names({"a"}),
      cjax::policies::memory_budget(1 << 20),
  };
  Array W = np::ones({3, 3}), x = np::ones({3});
  for (const cjax::PolicyRef& p : policies) {
    Array dx = cjax::grad(cjax::checkpoint(sum_sin_dot, p), cjax::argnums<1>)(W, x);
    CHECK(dx.shape() == cjax::Shape{3});
  }
  auto sum_at = [](const Array& v, const Array& i) {
    return np::sum(v * i.astype(cjax::DType::f32));
  };
  auto [dv, di] =
      cjax::grad(sum_at, cjax::argnums<0, 1>, cjax::allow_int)(x, np::ones({3}, cjax::DType::i32));
  CHECK(dv.shape() == cjax::Shape{3});
  CHECK(di.dtype() == cjax::DType::i32);
}
