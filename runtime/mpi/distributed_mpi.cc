// The collectives between processes, on MPI. Compiled only when CMake finds MPI (CJAX_HAVE_MPI);
// runtime/distributed_no_mpi.cc stands in otherwise. Each group of a mesh gets its communicator
// once (MPI_Comm_split of the world by the group's color), at its first collective: every process
// reaches its collectives in the same order (SPMD), so the splits match up.
//
// No wait is unbounded: every collective is started non-blocking and polled, and one that has not
// completed after CJAX_COLLECTIVE_TIMEOUT seconds (default 600) ends every process with a message
// (a process that failed, or took another path, would otherwise leave the others waiting).
// Only MPI's C API: its C++ bindings (deprecated) do not build warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "ir/errors.h"
#include "runtime/distributed_backend.h"

namespace cjax::runtime::distributed {
namespace {

bool& initialized_here() {
  static bool flag = false;
  return flag;
}

void finalize_at_exit() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(fmt::format("distributed: {} failed: {}", call, std::string(text, size_t(len))));
}

MPI_Datatype mpi_type(DType dtype, const char* what) {
  switch (dtype) {
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
    case DType::i8:
      return MPI_INT8_T;
    case DType::i16:
      return MPI_INT16_T;
    case DType::i32:
      return MPI_INT32_T;
    case DType::i64:
      return MPI_INT64_T;
    case DType::u8:
      return MPI_UINT8_T;
    case DType::u16:
      return MPI_UINT16_T;
    case DType::u32:
      return MPI_UINT32_T;
    case DType::u64:
      return MPI_UINT64_T;
    case DType::bool_:
      return MPI_C_BOOL;
    default:
      throw UnsupportedError(
          fmt::format("distributed: {} of {} between processes is not supported (MPI has no "
                      "such type)",
                      what, short_name(dtype)));
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::max:
      return MPI_MAX;
    case ReduceOp::min:
      return MPI_MIN;
  }
  return MPI_SUM;
}

double timeout_seconds() {
  static const double seconds = [] {
    const char* v = std::getenv("CJAX_COLLECTIVE_TIMEOUT");
    if (!v || !*v) return 600.0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (*end || !(s > 0))
      throw UsageError(
          fmt::format("CJAX_COLLECTIVE_TIMEOUT must be a positive number of "
                      "seconds, got '{}'",
                      v));
    return s;
  }();
  return seconds;
}

// Polls the requests until they complete, or ends every process once the timeout passes.
void wait_bounded(std::vector<MPI_Request>& requests, const char* what) {
  using Clock = std::chrono::steady_clock;
  const double limit = timeout_seconds();
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit);
  for (int spins = 0;; ++spins) {
    int done = 0;
    check(MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
          "MPI_Testall");
    if (done) return;
    if (Clock::now() > deadline)
      abort_all(
          fmt::format("distributed: {} waited {} s for the other processes of its group "
                      "(one of them failed or took another path; CJAX_COLLECTIVE_TIMEOUT "
                      "sets the limit)",
                      what, limit));
    if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void wait_bounded(MPI_Request request, const char* what) {
  std::vector<MPI_Request> one{request};
  wait_bounded(one, what);
}

MPI_Comm communicator(const backend::Group& g) {
  static std::mutex mutex;
  static std::map<std::string, MPI_Comm> comms;
  std::lock_guard lock(mutex);
  auto it = comms.find(g.key);
  if (it != comms.end()) return it->second;
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, int(g.color), int(g.rank), &comm), "MPI_Comm_split");
  check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return comms.emplace(g.key, comm).first->second;
}

// MPI counts are ints: larger transfers are refused rather than truncated.
int count_of(size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max()))
    throw UnsupportedError(
        fmt::format("distributed: {} of {} elements exceeds MPI's int count", what, n));
  return int(n);
}

}  // namespace

bool built_with_mpi() {
  return true;
}

void initialize() {
  int done = 0;
  MPI_Initialized(&done);
  if (done) return;
  // Compiled code may run a collective's kernel on one of its worker threads; calls are
  // serialized by the caller (one collective at a time), which MPI_THREAD_SERIALIZED allows.
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED)
    throw UnsupportedError(
        "distributed: this MPI cannot be called from several threads "
        "(MPI_THREAD_SERIALIZED), which compiled programs need");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  initialized_here() = true;
  std::atexit(finalize_at_exit);
}

bool is_initialized() {
  int done = 0, finalized = 0;
  MPI_Initialized(&done);
  MPI_Finalized(&finalized);
  return done && !finalized;
}

int64_t process_index() {
  if (!is_initialized()) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int64_t process_count() {
  if (!is_initialized()) return 1;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void abort_all(const std::string& message) {
  std::fprintf(stderr, "cjax: process %lld of %lld: %s; ending every process\n",
               static_cast<long long>(process_index()), static_cast<long long>(process_count()),
               message.c_str());
  std::fflush(stderr);
  if (is_initialized()) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

namespace backend {

void all_reduce(const Group& g, ReduceOp op, DType dtype, const void* in, void* out,
                int64_t count) {
  const MPI_Datatype t = mpi_type(dtype, "an all-reduce");
  if (dtype == DType::bool_ && op == ReduceOp::sum)
    throw UnsupportedError("distributed: psum of bool (cjax sums bools as int32 first)");
  MPI_Request r;
  check(MPI_Iallreduce(in == out ? MPI_IN_PLACE : in, out, count_of(size_t(count), "an all-reduce"),
                       t, mpi_op(op), communicator(g), &r),
        "MPI_Iallreduce");
  wait_bounded(r, "an all-reduce (psum, pmax, pmin)");
}

void all_gather(const Group& g, const void* in, void* out, size_t bytes) {
  const int n = count_of(bytes, "an all-gather");
  MPI_Request r;
  check(MPI_Iallgather(in, n, MPI_BYTE, out, n, MPI_BYTE, communicator(g), &r), "MPI_Iallgather");
  wait_bounded(r, "an all_gather");
}

void reduce_scatter_sum(const Group& g, DType dtype, const void* in, void* out, int64_t count) {
  const MPI_Datatype t = mpi_type(dtype, "a reduce-scatter");
  MPI_Request r;
  check(MPI_Ireduce_scatter_block(in, out, count_of(size_t(count), "a reduce-scatter"), t, MPI_SUM,
                                  communicator(g), &r),
        "MPI_Ireduce_scatter_block");
  wait_bounded(r, "a reduce_scatter (psum_scatter)");
}

void all_to_all(const Group& g, const void* in, void* out, size_t bytes) {
  const int n = count_of(bytes, "an all-to-all");
  MPI_Request r;
  check(MPI_Ialltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, communicator(g), &r), "MPI_Ialltoall");
  wait_bounded(r, "an all_to_all");
}

void send_recv(const Group& g, const void* in, std::optional<int64_t> to, void* out,
               std::optional<int64_t> from, size_t bytes) {
  const int n = count_of(bytes, "a ppermute");
  MPI_Comm comm = communicator(g);
  std::vector<MPI_Request> requests;
  if (from) {
    requests.emplace_back();
    check(MPI_Irecv(out, n, MPI_BYTE, int(*from), 0, comm, &requests.back()), "MPI_Irecv");
  }
  if (to) {
    requests.emplace_back();
    check(MPI_Isend(in, n, MPI_BYTE, int(*to), 0, comm, &requests.back()), "MPI_Isend");
  }
  wait_bounded(requests, "a ppermute");
}

void barrier(const char* what) {
  MPI_Request r;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &r), "MPI_Ibarrier");
  wait_bounded(r, what);
}

}  // namespace backend
}  // namespace cjax::runtime::distributed
