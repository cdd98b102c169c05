#include "compiler/lower/runtime_symbols.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "compiler/lower/lowering.h"
#include "runtime/allocator.h"

namespace cjax::lower {
namespace {

thread_local std::exception_ptr t_error;

// (call table, index, memref<?xindex>), the memref expanded to (allocated, aligned, offset,
// size, stride).
extern "C" void cjax_runtime_call_impl(int64_t table, int64_t index, void* /*allocated*/,
                                       void* aligned, int64_t offset, int64_t /*size*/,
                                       int64_t /*stride*/) {
  if (t_error) return;  // an earlier call failed: the rest of this run is moot
  auto* pointers = reinterpret_cast<void* const*>(static_cast<intptr_t*>(aligned) + offset);
  try {
    const auto* calls = reinterpret_cast<const RuntimeCall* const*>(static_cast<intptr_t>(table));
    calls[index]->run(pointers);
  } catch (...) {
    t_error = std::current_exception();
  }
}

extern "C" void* cjax_alloc(uint64_t n) {
  try {
    return runtime::tracked_malloc(n);
  } catch (...) {
    if (!t_error) t_error = std::current_exception();
    return nullptr;
  }
}

extern "C" void* cjax_aligned_alloc(uint64_t /*alignment <= 64*/, uint64_t n) {
  return cjax_alloc(n);
}

extern "C" void cjax_free(void* p) {
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
  const int64_t* sizes = s + 3;
  const int64_t* src_strides = s + 3 + rank;
  const int64_t* dst_strides = d + 3 + rank;
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i) total *= sizes[i];
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t so = 0, dof = 0;
  for (int64_t n = 0; n < total; ++n) {
    std::memcpy(dst_base + dof * elem_size, src_base + so * elem_size,
                static_cast<size_t>(elem_size));
    for (int64_t k = rank; k > 0; --k) {
      const auto u = static_cast<size_t>(k - 1);
      so += src_strides[k - 1];
      dof += dst_strides[k - 1];
      if (++idx[u] < sizes[k - 1]) break;
      so -= src_strides[k - 1] * sizes[k - 1];
      dof -= dst_strides[k - 1] * sizes[k - 1];
      idx[u] = 0;
    }
  }
}

}  // namespace

std::vector<std::pair<std::string_view, void*>> runtime_symbols() {
  return {{kRuntimeCallSymbol, reinterpret_cast<void*>(&cjax_runtime_call_impl)},
          {"_mlir_memref_to_llvm_alloc", reinterpret_cast<void*>(&cjax_alloc)},
          {"_mlir_memref_to_llvm_aligned_alloc", reinterpret_cast<void*>(&cjax_aligned_alloc)},
          {"_mlir_memref_to_llvm_free", reinterpret_cast<void*>(&cjax_free)},
          {"memrefCopy", reinterpret_cast<void*>(&cjax_memref_copy)}};
}

std::exception_ptr take_runtime_error() {
  return std::exchange(t_error, nullptr);
}

}  // namespace cjax::lower
