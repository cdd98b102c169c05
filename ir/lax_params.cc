#include "ir/lax_params.h"

#include "ir/errors.h"
#include "ir/sub_jaxprs.h"

namespace cjax::lax_params {

Params broadcast_in_dim(const Shape& shape, const std::vector<int64_t>& broadcast_dimensions) {
  return {{"shape", ParamValue::ints(shape)},
          {"broadcast_dimensions", ParamValue::ints(broadcast_dimensions)},
          {"sharding", NoneParam{}}};
}

Params reshape(const Shape& new_sizes) {
  return {{"new_sizes", ParamValue::ints(new_sizes)},
          {"dimensions", NoneParam{}},
          {"sharding", NoneParam{}}};
}

Params reduce(const std::vector<int64_t>& axes) {
  return {{"axes", ParamValue::ints(axes)}, {"out_sharding", NoneParam{}}};
}

Params argminmax(int64_t axis, DType index_dtype) {
  return {{"axes", ParamValue::ints({axis})}, {"index_dtype", index_dtype}};
}

Params convert_element_type(DType new_dtype, bool weak_type) {
  return {{"new_dtype", new_dtype}, {"weak_type", weak_type}, {"sharding", NoneParam{}}};
}

Params transpose(const std::vector<int64_t>& permutation) {
  return {{"permutation", ParamValue::ints(permutation)}};
}

Params squeeze(const std::vector<int64_t>& dimensions) {
  return {{"dimensions", ParamValue::ints(dimensions)}};
}

Params concatenate(int64_t dimension) {
  return {{"dimension", dimension}};
}

Params slice(const Shape& start, const Shape& limit, const std::vector<int64_t>& strides) {
  return {{"start_indices", ParamValue::ints(start)},
          {"limit_indices", ParamValue::ints(limit)},
          {"strides", strides.empty() ? ParamValue(NoneParam{}) : ParamValue::ints(strides)}};
}

Params dynamic_slice(const Shape& slice_sizes) {
  return {{"slice_sizes", ParamValue::ints(slice_sizes)}};
}

Params iota(DType dtype, const Shape& shape, int64_t dimension) {
  return {{"dtype", dtype},
          {"shape", ParamValue::ints(shape)},
          {"dimension", dimension},
          {"sharding", NoneParam{}}};
}

Params integer_pow(int64_t y) {
  return {{"y", y}};
}

Params dot_general(const DotDimensionNumbers& dn, const ParamValue& preferred_element_type,
                   const ParamValue& precision) {
  return {{"dimension_numbers", dn.to_param()},
          {"precision", precision},
          {"preferred_element_type", preferred_element_type},
          {"out_sharding", NoneParam{}}};
}

Params name(const std::string& n) {
  return {{"name", n}};
}

Params pad(const std::vector<std::vector<int64_t>>& padding_config) {
  ParamTuple rows;
  for (const auto& row : padding_config) rows.items.push_back(ParamValue::ints(row));
  return {{"padding_config", std::move(rows)}};
}

Params cumulative(int64_t axis, bool reverse) {
  return {{"axis", axis}, {"reverse", reverse}};
}

ParamValue avals(const std::vector<ShapedArray>& avals) {
  ParamTuple t;
  for (const ShapedArray& a : avals)
    t.items.emplace_back(ParamTuple{{a.dtype, ParamValue::ints(a.shape), a.weak_type}});
  return t;
}

std::vector<ShapedArray> avals_of(const ParamValue& v) {
  std::vector<ShapedArray> out;
  if (!v.is<ParamTuple>()) throw Error("out_avals: expected a tuple of avals");
  for (const ParamValue& item : v.as<ParamTuple>().items) {
    const auto* parts = item.is<ParamTuple>() ? &item.as<ParamTuple>().items : nullptr;
    if (!parts || parts->size() != 3 || !(*parts)[0].is<DType>() || !(*parts)[2].is<bool>())
      throw Error("out_avals: expected (dtype, shape, weak_type) items");
    out.emplace_back((*parts)[0].as<DType>(), (*parts)[1].to_ints(), (*parts)[2].as<bool>());
  }
  return out;
}

std::optional<std::string> device_put_memory_kind(const Params& p) {
  const ParamValue* v = p.find("devices");
  const std::vector<ParamValue>* devices = v ? param_items(*v) : nullptr;
  if (!devices || devices->empty()) return std::nullopt;
  std::optional<std::string> kind;
  for (const ParamValue& d : *devices) {
    if (!d.is<std::string>()) return std::nullopt;
    const std::string& k = d.as<std::string>();
    if ((k != "pinned_host" && k != "device") || (kind && *kind != k)) return std::nullopt;
    kind = k;
  }
  return kind;
}

}  // namespace cjax::lax_params
