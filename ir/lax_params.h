// The params JAX gives each primitive when it binds it, in one place: the tracer (numpy ops) and
// the passes (autodiff rules) both build eqns with these, so a traced program and a transformed one
// print the same params JAX prints (e.g. `reduce_sum[axes=(0,) out_sharding=None]`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"

namespace cjax::lax_params {

Params broadcast_in_dim(const Shape& shape, const std::vector<int64_t>& broadcast_dimensions);
Params reshape(const Shape& new_sizes);
Params reduce(const std::vector<int64_t>& axes);  // reduce_sum / reduce_max / reduce_min / ...
Params argminmax(int64_t axis, DType index_dtype);
Params convert_element_type(DType new_dtype, bool weak_type);
Params transpose(const std::vector<int64_t>& permutation);
Params squeeze(const std::vector<int64_t>& dimensions);
Params concatenate(int64_t dimension);
Params slice(const Shape& start, const Shape& limit, const std::vector<int64_t>& strides = {});
Params dynamic_slice(const Shape& slice_sizes);
Params iota(DType dtype, const Shape& shape, int64_t dimension);
Params integer_pow(int64_t y);
// precision None; preferred_element_type as given (NoneParam for none).
Params dot_general(const DotDimensionNumbers& dn, const ParamValue& preferred_element_type,
                   const ParamValue& precision = NoneParam{});
Params name(const std::string& name);  // checkpoint_name

// Avals as a param value (custom_lin's hidden `out_avals`: ((dtype, shape, weak_type), ...)), and
// back; the reader throws cjax::Error on anything else.
ParamValue avals(const std::vector<ShapedArray>& avals);
std::vector<ShapedArray> avals_of(const ParamValue& v);

// pad: one (low, high, interior) triple per operand dimension.
Params pad(const std::vector<std::vector<int64_t>>& padding_config);
// cumsum / cumprod / cummax / cummin / cumlogsumexp.
Params cumulative(int64_t axis, bool reverse);

// The memory kind a device_put moves its operands to, when every operand goes to the same one of
// the two an offload policy uses: "pinned_host" (offloaded) or "device" (brought back).
std::optional<std::string> device_put_memory_kind(const Params& device_put);

}  // namespace cjax::lax_params
