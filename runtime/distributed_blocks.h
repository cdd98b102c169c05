// The blocks of arrays split over a process mesh by a partition spec: a process's block of a
// whole array, and the whole array put together from every process's block (shard_map's
// arguments and outputs, and the front end's distributed::block_of / gather_blocks).
#pragma once

#include <cstdint>

#include "ir/sharding.h"
#include "runtime/buffer.h"

namespace cjax::runtime::distributed {

// Device `device`'s block of `whole` under `spec`, of shape `local` (local_shape's). No
// communication.
Buffer take_block(const Buffer& whole, const Shape& local, const PartitionSpec& spec,
                  const MeshAxes& mesh, int64_t device);

// The whole array (of shape global_shape(block's shape, spec)) from the blocks of the processes
// along the axes `spec` names, this process's `block` among them: a collective, which every
// process of the group calls, under a MeshScope of `mesh`. Along the axes the spec leaves out,
// the processes' blocks are taken to be equal (shard_map's check_vma=False contract).
Buffer gather_blocks(const Buffer& block, const Shape& whole, const PartitionSpec& spec,
                     const MeshAxes& mesh);

}  // namespace cjax::runtime::distributed
