// Processes and their collectives, over MPI (Open MPI from Debian; runtime/distributed_mpi.cc).
// Programs are SPMD: `mpirun -np 4 prog` starts four copies, each one device of a shard_map's
// mesh (device d is MPI rank d). Collectives over named mesh axes run among the processes that
// share this one's coordinates on every other axis, ranked by their coordinates along the named
// axes in the order named (as JAX's axis_index over several names). Built without MPI
// (CJAX_HAVE_MPI off), a single process runs and any collective between processes throws
// cjax::UnsupportedError saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/jaxpr.h"
#include "ir/sharding.h"
#include "runtime/buffer.h"

namespace cjax::runtime::distributed {

// Whether this build of cjax can run on several processes.
bool built_with_mpi();
// Initializes MPI once (a no-op if the program already did); it is finalized at exit. Throws
// cjax::UnsupportedError in a build without MPI.
void initialize();
bool is_initialized();
// This process's index and the number of processes (0 and 1 before initialize()).
int64_t process_index();
int64_t process_count();
// Prints `message` and ends every process of the job (MPI_Abort): a failing process must not
// leave the others waiting in a collective.
[[noreturn]] void abort_all(const std::string& message);
// Runs `f`; a cjax::Error from it on one process of several ends them all (abort_all), as the
// others may be waiting in a collective for this one. With one process the error is rethrown.
void run_or_end_every_process(const std::function<void()>& f);

// Throws cjax::UnsupportedError (saying how to start the processes) unless the mesh has one
// device per process; joins the processes mpirun started if need be. No communication.
void check_mesh(const MeshAxes& mesh);

// The mesh the collectives of a shard_map body run under on this thread, while in scope. Its
// device count must equal process_count().
class MeshScope {
 public:
  explicit MeshScope(const MeshAxes& mesh);
  ~MeshScope();
  MeshScope(const MeshScope&) = delete;
  MeshScope& operator=(const MeshScope&) = delete;
};
// The innermost mesh in scope, or nullptr.
const MeshAxes* current_mesh();

enum class ReduceOp { sum, max, min };

// The group of the named axes: this process's rank in it and its size.
int64_t group_rank(const std::vector<std::string>& axes);
int64_t group_size(const std::vector<std::string>& axes);
// Elementwise reduction of `count` elements of `dtype` over the group, into `out` (which may be
// `in`).
void all_reduce(const std::vector<std::string>& axes, ReduceOp op, DType dtype, const void* in,
                void* out, int64_t count);
// `out` receives every member's `bytes` bytes, member k's at k * bytes.
void all_gather(const std::vector<std::string>& axes, const void* in, void* out, size_t bytes);
// `in` holds one block of `count` elements per member; `out` receives the sum over the members
// of the block at this process's rank.
void reduce_scatter_sum(const std::vector<std::string>& axes, DType dtype, const void* in,
                        void* out, int64_t count);
// `in` holds one block of `bytes` per member; block k goes to member k, and `out` receives
// member k's block for this process at k * bytes.
void all_to_all(const std::vector<std::string>& axes, const void* in, void* out, size_t bytes);
// Sends `in` to member `to` and receives `out` from member `from` (either may be absent).
void send_recv(const std::vector<std::string>& axes, const void* in, std::optional<int64_t> to,
               void* out, std::optional<int64_t> from, size_t bytes);

// What runs a shard_map's body on this process's blocks: the interpreter unless the front end
// installs its back end's compiler (cjax/shard_map.cc does), so that a body runs as native code
// with its collectives as calls into this runtime.
using BodyRunner = std::vector<Buffer> (*)(const Jaxpr& body, std::span<const Buffer> blocks);
void set_shard_map_body_runner(BodyRunner runner);  // nullptr: the interpreter
// An error in the body on one process of several ends every process (run_or_end_every_process).
std::vector<Buffer> run_shard_map_body(const Jaxpr& body, std::span<const Buffer> blocks);

}  // namespace cjax::runtime::distributed
