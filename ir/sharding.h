// Meshes and partition specs as shard_map's params carry and print them (jax.sharding.Mesh and
// PartitionSpec): `Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))`, `P('x', None)`,
// `P(('x', 'y'),)`. The params hold the printed text (what the jaxpr parser reads back as is);
// these types are what the shape rule, the interpreter and the front end work with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/params.h"
#include "ir/shaped_array.h"

namespace cjax {

// The most devices a mesh may have (a bound for readers of printed meshes: sizes multiply).
inline constexpr int64_t kMaxMeshDevices = int64_t{1} << 24;

// A mesh's named axes and their sizes, row-major: device (process) d sits at the coordinates of
// d in that order, as jax.sharding.Mesh(np.arange(n).reshape(sizes), names) places devices.
struct MeshAxes {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;

  int64_t device_count() const;
  std::optional<size_t> find(std::string_view name) const;
  // Throws cjax::Error naming `what` (the caller) when `name` is not an axis of the mesh.
  int64_t size_of(std::string_view name, std::string_view what) const;
  // The device's coordinate along each axis.
  std::vector<int64_t> coords(int64_t device) const;
  // Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))
  std::string repr() const;
  // Reads repr()'s form back; throws cjax::Error saying what is malformed.
  static MeshAxes parse(std::string_view text);
};

// For each leading dimension of an array, the mesh axes it is split over (empty: not split,
// JAX's None). Dimensions past the spec are not split.
struct PartitionSpec {
  std::vector<std::vector<std::string>> dims;

  // Every axis the spec names, in order.
  std::vector<std::string> axes() const;
  // P('x', None), P(('x', 'y'),), P()
  std::string repr() const;
  static PartitionSpec parse(std::string_view text);
};

// shard_map's in_specs / out_specs param: `(P('x',), P())`, and back.
ParamValue specs_param(const std::vector<PartitionSpec>& specs);
std::vector<PartitionSpec> specs_from_param(const ParamValue& v, std::string_view key);
ParamValue mesh_param(const MeshAxes& mesh);
MeshAxes mesh_from_param(const ParamValue& v);
// newly_manual_axes=frozenset({'x', 'y'}): the mesh's axes, in mesh order.
ParamValue manual_axes_param(const MeshAxes& mesh);

// The block of an array of shape `global` that one device holds under `spec`: each split
// dimension divided by the product of its axes' sizes. Throws cjax::Error (naming `what`) when
// the spec has more entries than the rank, names an axis twice or one the mesh lacks, or a
// dimension does not divide.
Shape local_shape(const Shape& global, const PartitionSpec& spec, const MeshAxes& mesh,
                  std::string_view what);
// The whole array that blocks of shape `local` make under `spec`.
Shape global_shape(const Shape& local, const PartitionSpec& spec, const MeshAxes& mesh,
                   std::string_view what);
// Where device `device`'s block starts in the whole array, per dimension: along a dimension split
// over axes (a, b), the block index is coord(a) * size(b) + coord(b).
std::vector<int64_t> block_start(const Shape& local, const PartitionSpec& spec,
                                 const MeshAxes& mesh, int64_t device);

}  // namespace cjax
