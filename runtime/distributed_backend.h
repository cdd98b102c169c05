// Internal to runtime/distributed*.cc: what the MPI build (distributed_mpi.cc) and the build
// without it (distributed_no_mpi.cc) each provide. distributed.cc keeps the mesh, works out the
// groups, and runs groups of one process itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ir/dtype.h"
#include "runtime/distributed.h"

namespace cjax::runtime::distributed::backend {

// The processes a collective runs among: those of the same `color` (their coordinates on the
// mesh's other axes), ranked by `rank`. `key` names the group for reuse of its communicator.
struct Group {
  std::string key;
  int64_t color = 0;
  int64_t rank = 0;
  int64_t size = 1;
};

void all_reduce(const Group& g, ReduceOp op, DType dtype, const void* in, void* out, int64_t count);
void all_gather(const Group& g, const void* in, void* out, size_t bytes);
void reduce_scatter_sum(const Group& g, DType dtype, const void* in, void* out, int64_t count);
void all_to_all(const Group& g, const void* in, void* out, size_t bytes);
void send_recv(const Group& g, const void* in, std::optional<int64_t> to, void* out,
               std::optional<int64_t> from, size_t bytes);

// Every process of the job reaches this point (bounded like the collectives).
void barrier(const char* what);

}  // namespace cjax::runtime::distributed::backend
