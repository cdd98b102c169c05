// Programs that cannot fit in memory (docs/errors.md, "out of memory"): refused before they run
// when their modelled peak exceeds what this process may use (runtime/system_memory.h), with a
// message naming the largest array, its size and the limit; an allocation that fails anyway is a
// cjax::Error on both back ends, never a crash.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "compiler/cpu/executable.h"
#include "compiler/cpu/runtime_symbols.h"
#include "ir/errors.h"
#include "ir/parse/parser.h"
#include "runtime/allocator.h"
#include "runtime/buffer.h"
#include "runtime/interpreter.h"
#include "runtime/system_memory.h"
#include "tests/cli/run_cli.h"

using cli_test::run_cli;
using namespace cjax;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(CJAX_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The allocation function compiled code calls (memref.alloc), as the JIT resolves it.
using AllocFn = void* (*)(uint64_t);
AllocFn compiled_alloc() {
  for (auto [name, address] : lower::runtime_symbols())
    if (name == "_mlir_memref_to_llvm_alloc") return reinterpret_cast<AllocFn>(address);
  return nullptr;
}

// Stands in for compiled code: allocates a block it never frees, then asks for more than any
// machine has.
void greedy_code(void** /*args*/) {
  compiled_alloc()(4096);
  compiled_alloc()(uint64_t{1} << 50);
  FAIL("compiled code went on past a failed allocation");
}

}  // namespace

TEST_CASE("a program larger than memory is refused before it runs, naming its largest array") {
  const std::string huge = write(
      "huge.jaxpr",
      "{ lambda ; a:f32[100000,100000,100000]. let b:f32[100000,100000,100000] = sin a in (b,) "
      "}\n");
  for (const char* backend : {"cpu", "interpreter"}) {
    CAPTURE(backend);
    auto r = run_cli("run " + huge + " --backend " + backend);
    CHECK(r.code == 1);
    CHECK(r.out.empty());
    CHECK(r.err.find("not run: the program needs 7.11 PiB (8000000000000000 bytes) at its peak") !=
          std::string::npos);
    CHECK(r.err.find("its largest array is argument a f32[100000,100000,100000] (3.55 PiB)") !=
          std::string::npos);
  }
  // A limit of the user's own: a 4 MiB program under 1 MiB.
  const std::string small =
      write("four_mib.jaxpr",
            "{ lambda ; a:f32[1024,1024]. let b:f32[1024,1024] = tanh a; c:f32[] = "
            "reduce_sum[axes=(0, 1) out_sharding=None] b in (c,) }\n");
  REQUIRE(run_cli("run " + small + " --seed 0").code == 0);
  setenv(runtime::kMemoryLimitVariable, "1MiB", 1);
  auto capped = run_cli("run " + small + " --seed 0");
  setenv(runtime::kMemoryLimitVariable, "lots", 1);
  auto bad = run_cli("run " + small);
  unsetenv(runtime::kMemoryLimitVariable);
  CHECK(capped.code == 1);
  CHECK(capped.err.find("but the limit CJAX_MEMORY_LIMIT=1MiB sets is 1.0 MiB (1048576 bytes); "
                        "its largest array is argument a f32[1024,1024] (4.0 MiB)") !=
        std::string::npos);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("CJAX_MEMORY_LIMIT='lots' is not a size") != std::string::npos);
}

TEST_CASE("an allocation that fails is an error on both back ends") {
  // The interpreter: the buffer it could not allocate, named.
  try {
    runtime::Buffer::allocate(ShapedArray(DType::f32, {int64_t{1} << 49}));
    FAIL("allocated 2 PiB");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "out of memory: cannot allocate f32[562949953421312] (2.00 PiB, 2251799813685248 bytes)");
  }
  // Compiled code cannot unwind: its failed allocation returns to the caller of the code, which
  // frees what the code had allocated and reports the failure.
  REQUIRE(compiled_alloc() != nullptr);
  const size_t live = runtime::memory_stats().live_bytes;
  CHECK_FALSE(lower::run_compiled(greedy_code, nullptr));
  CHECK(runtime::memory_stats().live_bytes == live);
  std::exception_ptr e = lower::take_runtime_error();
  REQUIRE(e);
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    CHECK(std::string(err.what()) ==
          "out of memory: compiled code could not allocate 1.00 PiB (1125899906842624 bytes)");
  }
}
