#include "runtime/distributed.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ir/errors.h"
#include "runtime/distributed_backend.h"
#include "runtime/interpreter.h"

namespace cjax::runtime::distributed {
namespace {

std::vector<MeshAxes>& meshes() {
  thread_local std::vector<MeshAxes> stack;
  return stack;
}

const MeshAxes& mesh_or_throw(const std::vector<std::string>& axes) {
  const MeshAxes* mesh = current_mesh();
  if (!mesh)
    throw UnsupportedError(fmt::format(
        "interpreter: unbound axis name: {} (a collective runs under vmap(..., axis_name=...) "
        "or inside shard_map over a mesh)",
        axes.empty() ? std::string("?") : axes[0]));
  return *mesh;
}

// This process's group for `axes`: rank by its coordinates along `axes` (in the order named),
// color by its coordinates along the others (in mesh order).
backend::Group group_of(const std::vector<std::string>& axes) {
  const MeshAxes& mesh = mesh_or_throw(axes);
  const std::vector<int64_t> coords = mesh.coords(process_index());
  std::vector<bool> named(mesh.names.size(), false);
  backend::Group g;
  g.key = mesh.repr();
  g.size = 1;
  for (const std::string& a : axes) {
    const std::optional<size_t> i = mesh.find(a);
    if (!i)
      throw UnsupportedError(
          fmt::format("interpreter: unbound axis name: {} (not an axis of "
                      "the mesh {})",
                      a, mesh.repr()));
    if (named[*i]) throw TypeError(fmt::format("interpreter: the axis name '{}' appears twice", a));
    named[*i] = true;
    g.rank = g.rank * mesh.sizes[*i] + coords[*i];
    g.size *= mesh.sizes[*i];
    g.key += "|" + a;
  }
  for (size_t i = 0; i < mesh.names.size(); ++i)
    if (!named[i]) g.color = g.color * mesh.sizes[i] + coords[i];
  return g;
}

// MPI is initialized for serialized calls (runtime/mpi/distributed_mpi.cc): one collective at a
// time per process, whichever thread runs it.
std::mutex& mpi_calls() {
  static std::mutex m;
  return m;
}

// Whether mpirun (Open MPI, or a PMI launcher) started this process.
bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

}  // namespace

void check_mesh(const MeshAxes& mesh) {
  // A program run by mpirun joins the other processes at its first shard_map over several
  // devices, without calling initialize() (`mpirun -np 4 cjax run prog.jaxpr`).
  if (mesh.device_count() > 1 && built_with_mpi() && !is_initialized() && started_by_mpirun())
    initialize();
  if (mesh.device_count() != process_count())
    throw UnsupportedError(fmt::format(
        "shard_map: the mesh {} has {} devices, but {} process{} run{} (one process is one "
        "device: start the program with mpirun -np {}{})",
        mesh.repr(), mesh.device_count(), process_count(), process_count() == 1 ? "" : "es",
        process_count() == 1 ? "s" : "", mesh.device_count(),
        built_with_mpi() ? "" : ", in a build of cjax with MPI"));
}

MeshScope::MeshScope(const MeshAxes& mesh) {
  check_mesh(mesh);
  // Every process enters the shard_map before any of its collectives (bounded: one that never
  // comes ends the job instead of leaving the others waiting).
  if (mesh.device_count() > 1) {
    std::lock_guard lock(mpi_calls());
    backend::barrier("shard_map's start");
  }
  meshes().push_back(mesh);
}

MeshScope::~MeshScope() {
  meshes().pop_back();
}

namespace {
std::atomic<BodyRunner>& body_runner() {
  static std::atomic<BodyRunner> runner{nullptr};
  return runner;
}
}  // namespace

void set_shard_map_body_runner(BodyRunner runner) {
  body_runner().store(runner);
}

void run_or_end_every_process(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    if (process_count() > 1) abort_all(e.what());
    throw;
  }
}

std::vector<Buffer> run_shard_map_body(const Jaxpr& body, std::span<const Buffer> blocks) {
  const BodyRunner runner = body_runner().load();
  std::vector<Buffer> results;
  run_or_end_every_process([&] {
    results = runner && body.constvars.empty() ? runner(body, blocks) : eval_jaxpr(body, blocks);
  });
  return results;
}

const MeshAxes* current_mesh() {
  return meshes().empty() ? nullptr : &meshes().back();
}

int64_t group_rank(const std::vector<std::string>& axes) {
  return group_of(axes).rank;
}

int64_t group_size(const std::vector<std::string>& axes) {
  return group_of(axes).size;
}

void all_reduce(const std::vector<std::string>& axes, ReduceOp op, DType dtype, const void* in,
                void* out, int64_t count) {
  const backend::Group g = group_of(axes);
  if (g.size == 1) {
    if (in != out) std::memcpy(out, in, size_t(count) * itemsize(dtype));
    return;
  }
  std::lock_guard lock(mpi_calls());
  backend::all_reduce(g, op, dtype, in, out, count);
}

void all_gather(const std::vector<std::string>& axes, const void* in, void* out, size_t bytes) {
  const backend::Group g = group_of(axes);
  if (g.size == 1) return (void)std::memcpy(out, in, bytes);
  std::lock_guard lock(mpi_calls());
  backend::all_gather(g, in, out, bytes);
}

void reduce_scatter_sum(const std::vector<std::string>& axes, DType dtype, const void* in,
                        void* out, int64_t count) {
  const backend::Group g = group_of(axes);
  if (g.size == 1) return (void)std::memcpy(out, in, size_t(count) * itemsize(dtype));
  std::lock_guard lock(mpi_calls());
  backend::reduce_scatter_sum(g, dtype, in, out, count);
}

void all_to_all(const std::vector<std::string>& axes, const void* in, void* out, size_t bytes) {
  const backend::Group g = group_of(axes);
  if (g.size == 1) return (void)std::memcpy(out, in, bytes);
  std::lock_guard lock(mpi_calls());
  backend::all_to_all(g, in, out, bytes);
}

void send_recv(const std::vector<std::string>& axes, const void* in, std::optional<int64_t> to,
               void* out, std::optional<int64_t> from, size_t bytes) {
  const backend::Group g = group_of(axes);
  if (g.size == 1) {
    if (to && from) std::memcpy(out, in, bytes);
    return;
  }
  std::lock_guard lock(mpi_calls());
  backend::send_recv(g, in, to, out, from, bytes);
}

}  // namespace cjax::runtime::distributed
