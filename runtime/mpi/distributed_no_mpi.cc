// A build without MPI (CJAX_HAVE_MPI off): one process, whose meshes have one device. Groups of
// one process never reach these functions (runtime/distributed.cc copies locally).
#include <cstdio>
#include <cstdlib>

#include "ir/errors.h"
#include "runtime/distributed_backend.h"

namespace cjax::runtime::distributed {
namespace {

[[noreturn]] void no_mpi() {
  throw UnsupportedError(
      "distributed: this build of cjax has no MPI (install libopenmpi-dev and rebuild): "
      "collectives between processes cannot run");
}

}  // namespace

bool built_with_mpi() {
  return false;
}
void initialize() {
  no_mpi();
}
bool is_initialized() {
  return false;
}
int64_t process_index() {
  return 0;
}
int64_t process_count() {
  return 1;
}
void abort_all(const std::string& message) {
  std::fprintf(stderr, "cjax: %s\n", message.c_str());
  std::_Exit(1);
}

namespace backend {

void all_reduce(const Group&, ReduceOp, DType, const void*, void*, int64_t) {
  no_mpi();
}
void all_gather(const Group&, const void*, void*, size_t) {
  no_mpi();
}
void reduce_scatter_sum(const Group&, DType, const void*, void*, int64_t) {
  no_mpi();
}
void all_to_all(const Group&, const void*, void*, size_t) {
  no_mpi();
}
void send_recv(const Group&, const void*, std::optional<int64_t>, void*, std::optional<int64_t>,
               size_t) {
  no_mpi();
}

void barrier(const char*) {}

}  // namespace backend
}  // namespace cjax::runtime::distributed
