#include "compiler/cpu/perf_map.h"

#include <fmt/format.h>
#include <llvm/Support/Error.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace cjax::lower {

bool perf_map_requested() {
  const char* v = std::getenv("CJAX_PERF_MAP");
  return v && *v && std::string(v) != "0";
}

void write_perf_map(mlir::ModuleOp module, mlir::ExecutionEngine& engine,
                    const std::string& program) {
  std::vector<std::pair<uintptr_t, std::string>> functions;
  module.walk([&](mlir::LLVM::LLVMFuncOp f) {
    if (f.isExternal()) return;
    const std::string name = f.getName().str();
    llvm::Expected<void*> address = engine.lookup(name);
    if (!address) {
      llvm::consumeError(address.takeError());  // not a symbol of its own (internal, inlined)
      return;
    }
    functions.emplace_back(reinterpret_cast<uintptr_t>(*address), name);
  });
  std::sort(functions.begin(), functions.end());
  constexpr uintptr_t kLastSize = 64 << 10;
  static std::mutex mutex;  // compiles on several threads append whole lines
  const std::lock_guard<std::mutex> lock(mutex);
  FILE* out = std::fopen(fmt::format("/tmp/perf-{}.map", getpid()).c_str(), "a");
  if (!out) return;  // a diagnostic aid: without /tmp, nothing to name
  for (size_t i = 0; i < functions.size(); ++i) {
    const uintptr_t start = functions[i].first;
    const uintptr_t size = i + 1 < functions.size() && functions[i + 1].first > start
                               ? functions[i + 1].first - start
                               : kLastSize;
    fmt::print(out, "{:x} {:x} cjax:{}:{}\n", start, size, program, functions[i].second);
  }
  std::fclose(out);
}

}  // namespace cjax::lower
