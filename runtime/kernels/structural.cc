// Shape primitives that move elements without computing: broadcast_in_dim, reshape, transpose,
// squeeze, expand_dims, rev, and iota. They work on bytes, so every dtype with storage is accepted.
#include <algorithm>
#include <numeric>

#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

// The output has the same elements in the same row-major order (only the shape changes).
void same_elements(const Buffer& in, Buffer& out) {
  if (in.aval().dtype != out.aval().dtype || in.aval().size() != out.aval().size())
    kernel_type_error("cannot turn {} into {}", in.aval().str_short(), out.aval().str_short());
  if (in.nbytes()) std::memcpy(out.data(), in.data(), in.nbytes());
}

// Copies `in` read through `strides` (one per output dimension) into the contiguous output.
void gather_into(const Buffer& in, Buffer& out, const std::vector<int64_t>& strides, int64_t base) {
  strided_copy(out.data(), in.data(), itemsize(out.aval().dtype), out.aval().shape, strides, base);
}

void check_dtype_kept(const Buffer& in, const Buffer& out) {
  if (in.aval().dtype != out.aval().dtype)
    kernel_type_error("operand {} and output {} differ in dtype", in.aval().str_short(),
                      out.aval().str_short());
}

// When `key` holds a shape (a tuple of ints), it must be the output's: the out avals given to
// apply_primitive and the eqn's params must agree.
void check_shape_param(const Params& params, std::string_view key, const ShapedArray& out) {
  const ParamValue* v = params.find(key);
  if (!v || !(v->is<ParamTuple>() || v->is<ParamList>())) return;
  const std::vector<int64_t> shape = params.get_ints(key);
  if (shape != out.shape)
    kernel_type_error("param {}={} does not match the output {}", key, shape_str(shape),
                      out.str_short());
}

// Validates a permutation of [0, rank).
void check_permutation(const std::vector<int64_t>& perm, int64_t rank, const char* what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
      ok = false;
      break;
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (!ok) kernel_type_error("{} {} is not a permutation of rank {}", what, shape_str(perm), rank);
}

// broadcast_in_dim[shape broadcast_dimensions]: operand dimension i becomes output dimension
// broadcast_dimensions[i]; a size-1 operand dimension repeats. When the param is absent (the
// bare form JAX prints), the operand's dimensions align with the output's trailing ones.
void broadcast_in_dim_kernel(const Params& params, std::span<const Buffer> in,
                             std::span<Buffer> out) {
  check_arity(in, 1);  // no dynamic-shape operands: cjax's shapes are static
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  const ShapedArray& oa = out[0].aval();
  check_dtype_kept(in[0], out[0]);
  check_shape_param(params, "shape", oa);
  std::vector<int64_t> dims;
  if (const ParamValue* v = params.find("broadcast_dimensions"); v && !v->is_none()) {
    dims = params.get_ints("broadcast_dimensions");
  } else {
    if (ia.rank() > oa.rank())
      kernel_type_error("operand {} has more dimensions than {}", ia.str_short(), oa.str_short());
    for (int64_t i = 0; i < ia.rank(); ++i) dims.push_back(oa.rank() - ia.rank() + i);
  }
  if (static_cast<int64_t>(dims.size()) != ia.rank())
    kernel_type_error("broadcast_dimensions {} do not match operand {}", shape_str(dims),
                      ia.str_short());
  std::vector<int64_t> own = row_major_strides(ia.shape);
  std::vector<int64_t> strides(oa.shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= oa.rank() || (i > 0 && d <= dims[i - 1]))
      kernel_type_error("invalid broadcast_dimensions {} for {} -> {}", shape_str(dims),
                        ia.str_short(), oa.str_short());
    const int64_t od = oa.shape[static_cast<size_t>(d)];
    if (ia.shape[i] == od)
      strides[static_cast<size_t>(d)] = own[i];
    else if (ia.shape[i] != 1)
      kernel_type_error("operand {} does not broadcast to {} along dimension {}", ia.str_short(),
                        oa.str_short(), d);
  }
  gather_into(in[0], out[0], strides, 0);
}

// reshape[new_sizes dimensions]: row-major; a non-None `dimensions` (an old form) transposes the
// operand by that permutation first.
void reshape_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  check_shape_param(params, "new_sizes", out[0].aval());
  const ParamValue* dv = params.find("dimensions");
  if (!dv || dv->is_none()) return same_elements(in[0], out[0]);
  const ShapedArray& ia = in[0].aval();
  std::vector<int64_t> perm = params.get_ints("dimensions");
  check_permutation(perm, ia.rank(), "dimensions");
  if (ia.size() != out[0].aval().size()) same_elements(in[0], out[0]);  // throws the message
  check_dtype_kept(in[0], out[0]);
  Shape tshape;
  std::vector<int64_t> own = row_major_strides(ia.shape), strides;
  for (int64_t p : perm) {
    tshape.push_back(ia.shape[static_cast<size_t>(p)]);
    strides.push_back(own[static_cast<size_t>(p)]);
  }
  strided_copy(out[0].data(), in[0].data(), itemsize(ia.dtype), tshape, strides, 0);
}

// transpose[permutation]: output dimension j is operand dimension permutation[j].
void transpose_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  check_dtype_kept(in[0], out[0]);
  std::vector<int64_t> perm = params.get_ints("permutation");
  check_permutation(perm, ia.rank(), "permutation");
  std::vector<int64_t> own = row_major_strides(ia.shape), strides;
  Shape want;
  for (int64_t p : perm) {
    want.push_back(ia.shape[static_cast<size_t>(p)]);
    strides.push_back(own[static_cast<size_t>(p)]);
  }
  if (want != out[0].aval().shape)
    kernel_type_error("transposing {} by {} gives shape {}, not {}", ia.str_short(),
                      shape_str(perm), shape_str(want), out[0].aval().str_short());
  gather_into(in[0], out[0], strides, 0);
}

void squeeze_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  for (int64_t d : params.get_ints("dimensions")) {
    int64_t a = normalize_axis(d, in[0].aval().rank());
    if (in[0].aval().shape[static_cast<size_t>(a)] != 1)
      kernel_type_error("cannot squeeze dimension {} of {}: its size is not 1", d,
                        in[0].aval().str_short());
  }
  same_elements(in[0], out[0]);
}

void expand_dims_kernel(const Params&, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  same_elements(in[0], out[0]);
}

// rev[dimensions]: reverses the order of elements along each listed dimension.
void rev_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 1);
  check_outputs(out, 1);
  const ShapedArray& ia = in[0].aval();
  if (!ia.same_type(out[0].aval()))
    kernel_type_error("operand {} does not match the output {}", ia.str_short(),
                      out[0].aval().str_short());
  std::vector<int64_t> strides = row_major_strides(ia.shape);
  int64_t base = 0;
  for (int64_t d : params.get_ints("dimensions")) {
    const size_t a = static_cast<size_t>(normalize_axis(d, ia.rank()));
    if (strides[a] < 0) kernel_type_error("dimension {} listed twice", d);
    base += (ia.shape[a] - 1) * strides[a];
    strides[a] = -strides[a];
  }
  if (ia.size() == 0) return;
  gather_into(in[0], out[0], strides, base);
}

// iota[dtype shape dimension]: each element is its index along `dimension`.
void iota_kernel(const Params& params, std::span<const Buffer> in, std::span<Buffer> out) {
  check_arity(in, 0);
  check_outputs(out, 1);
  const ShapedArray& oa = out[0].aval();
  check_shape_param(params, "shape", oa);
  const int64_t dim = params.has("dimension") ? params.get_int("dimension") : 0;
  const size_t d = static_cast<size_t>(normalize_axis(dim, oa.rank()));
  const int64_t stride = row_major_strides(oa.shape)[d], size = oa.shape[d];
  dispatch_op<kNumeric>(oa.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].as<T>();
    for (int64_t i = 0, n = oa.size(); i < n; ++i) y[i] = static_cast<T>((i / stride) % size);
  });
}

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  r.add("broadcast_in_dim", broadcast_in_dim_kernel);
  r.add("reshape", reshape_kernel);
  r.add("transpose", transpose_kernel);
  r.add("squeeze", squeeze_kernel);
  r.add("expand_dims", expand_dims_kernel);
  r.add("rev", rev_kernel);
  r.add("iota", iota_kernel);
}

}  // namespace cjax::runtime
