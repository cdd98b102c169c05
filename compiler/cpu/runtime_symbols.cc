#include "compiler/cpu/runtime_symbols.h"

#include <fmt/format.h>

#include <csetjmp>
#include <cstdint>
#include <new>
#include <span>
#include <unordered_set>
#include <vector>

#include "compiler/cpu/lowering.h"
#include "ir/byte_size.h"
#include "ir/errors.h"
#include "runtime/allocator.h"
#include "runtime/strided_copy.h"

namespace cjax::lower {
namespace {

thread_local std::exception_ptr t_error;

// (call table, index, memref<?xindex>), the memref expanded to (allocated, aligned, offset,
// size, stride).
extern "C" void cjax_runtime_call_impl(int64_t table, int64_t index, void* /*allocated*/,
                                       void* aligned, int64_t offset, int64_t /*size*/,
                                       int64_t /*stride*/) {
  if (t_error) return;  // an earlier call failed: the rest of this run is moot
  const intptr_t* words = static_cast<intptr_t*>(aligned) + offset;
  try {
    const auto* calls = reinterpret_cast<const RuntimeCall* const*>(static_cast<intptr_t>(table));
    calls[index]->invoke(words);
  } catch (...) {
    t_error = std::current_exception();
  }
}

// While compiled code runs on this thread (run_compiled): where to go should one of its
// allocations fail, and the blocks it holds, to free then. Compiled code allocates only on the
// calling thread, between its parallel loops (bufferization hoists allocations out of loop
// bodies), so no worker is running when it jumps.
struct CompiledRun {
  sigjmp_buf out_of_memory;
  std::unordered_set<void*> blocks;
};
thread_local CompiledRun* t_run = nullptr;

extern "C" void* cjax_alloc(uint64_t n) {
  void* p = nullptr;
  try {
    p = runtime::tracked_malloc(n);
    if (t_run) t_run->blocks.insert(p);
  } catch (const std::bad_alloc&) {
    runtime::tracked_free(p);  // when only the bookkeeping failed
    p = nullptr;
    if (!t_error)
      t_error = std::make_exception_ptr(
          Error(fmt::format("out of memory: compiled code could not allocate {} ({} bytes)",
                            format_byte_size(n), n)));
  }
  // Compiled code cannot take a null buffer, nor unwind: leave it (outside the catch block).
  if (!p && t_run) siglongjmp(t_run->out_of_memory, 1);
  return p;
}

extern "C" void* cjax_aligned_alloc(uint64_t /*alignment <= 64*/, uint64_t n) {
  return cjax_alloc(n);
}

extern "C" void cjax_free(void* p) {
  if (t_run) t_run->blocks.erase(p);
  runtime::tracked_free(p);
}

// memref.copy between buffers that are not both contiguous (a strided slice, say) lowers to
// this C function; MLIR's runner-utils library would provide it, we do without that library.
struct UnrankedDescriptor {
  int64_t rank;
  void* descriptor;  // {allocated, aligned, offset, sizes[rank], strides[rank]}
};

extern "C" void cjax_memref_copy(int64_t elem_size, UnrankedDescriptor* src,
                                 UnrankedDescriptor* dst) {
  const int64_t rank = src->rank;
  const auto* s = static_cast<const int64_t*>(src->descriptor);
  const auto* d = static_cast<const int64_t*>(dst->descriptor);
  char* src_base = reinterpret_cast<char*>(s[1]) + s[2] * elem_size;
  char* dst_base = reinterpret_cast<char*>(d[1]) + d[2] * elem_size;
  const auto n = static_cast<size_t>(rank);
  runtime::strided_copy(static_cast<size_t>(elem_size), std::span<const int64_t>(s + 3, n),
                        src_base, std::span<const int64_t>(s + 3 + rank, n), dst_base,
                        std::span<const int64_t>(d + 3 + rank, n));
}

}  // namespace

std::vector<std::pair<std::string_view, void*>> runtime_symbols() {
  return {{kRuntimeCallSymbol, reinterpret_cast<void*>(&cjax_runtime_call_impl)},
          {"_mlir_memref_to_llvm_alloc", reinterpret_cast<void*>(&cjax_alloc)},
          {"_mlir_memref_to_llvm_aligned_alloc", reinterpret_cast<void*>(&cjax_aligned_alloc)},
          {"_mlir_memref_to_llvm_free", reinterpret_cast<void*>(&cjax_free)},
          {"memrefCopy", reinterpret_cast<void*>(&cjax_memref_copy)}};
}

bool run_compiled(void (*entry)(void**), void** args) {
  CompiledRun run;
  CompiledRun* const outer = std::exchange(t_run, &run);
  // Nothing this function changes after sigsetjmp is read after the jump but `run` itself,
  // which lives outside the jump's reach.
  if (sigsetjmp(run.out_of_memory, 0) != 0) {
    t_run = outer;
    for (void* p : run.blocks) runtime::tracked_free(p);
    return false;
  }
  entry(args);
  t_run = outer;
  return true;
}

std::exception_ptr take_runtime_error() {
  return std::exchange(t_error, nullptr);
}

}  // namespace cjax::lower
