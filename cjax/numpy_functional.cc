// jnp.apply_along_axis (jax/_src/numpy/lax_numpy.py): the 1-D function
// vmapped over every other axis, the axes after `axis` innermost (batched last), those before
// it outermost, so make_jaxpr prints JAX's nest of batched equations.
#include "cjax/bind.h"
#include "cjax/lax.h"
#include "cjax/numpy.h"
#include "cjax/numpy_util.h"
#include "cjax/vmap.h"

namespace cjax::numpy {

Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis,
                       const Array& arr, Loc src) {
  const int64_t num_dims = arr.ndim();
  if (num_dims == 0)
    throw_type_error(src, "apply_along_axis: the array has no axis to apply along");
  axis = lax::canonicalize_axis(axis, num_dims, "apply_along_axis", src);
  std::function<Array(const Array&)> func = func1d;
  for (int64_t i = 1; i < num_dims - axis; ++i)
    func = vmap(func, VmapAxes(static_cast<int>(i)), VmapAxes(-1));
  for (int64_t i = 0; i < axis; ++i) func = vmap(func, VmapAxes(0), VmapAxes(0));
  return func(arr);
}

}  // namespace cjax::numpy
