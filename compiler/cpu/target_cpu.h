// The CPU the JIT compiles for: the host's own (the default, or CJAX_TARGET_CPU=native), or the
// one CJAX_TARGET_CPU names (x86-64-v2, x86-64-v3, x86-64-v4, or any CPU LLVM knows, such as
// skylake-avx512). Vector width and FMA contraction follow the target, so the same program gives
// results that differ in the last bits from one machine to another; naming a target reproduces
// another machine's code on this one. A target this CPU cannot run is refused, never executed.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
}

namespace cjax::lower {

// The environment variable that names the target CPU.
inline constexpr const char* kTargetCpuVariable = "CJAX_TARGET_CPU";

// The CPU name the JIT targets now: "native" (the host's) or CJAX_TARGET_CPU's value.
std::string jit_target_cpu();

// A target machine for the JIT's code generation and LLVM's optimizer. Throws UsageError for a
// CPU LLVM does not know, UnsupportedError for one whose features this machine lacks; `where`
// names the program in the messages.
std::unique_ptr<llvm::TargetMachine> jit_target_machine(const std::string& where);

}  // namespace cjax::lower
