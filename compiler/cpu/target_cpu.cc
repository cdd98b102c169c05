#include "compiler/cpu/target_cpu.h"

#include <fmt/format.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "ir/errors.h"

namespace cjax::lower {
namespace {

std::string program_name(const std::string& where) {
  return where.empty() ? "the program" : where;
}

// Instruction-set extensions compiled arithmetic may use. A virtual machine often hides system
// features of its CPU (pku, invpcid, xsaves, shstk, ...) that generated code never uses; those
// are only switched off, not a reason to refuse a target.
bool is_instruction_set(const std::string& feature) {
  for (const char* prefix : {"sse",    "ssse3",      "avx",  "fma", "f16c", "bmi",  "lzcnt",
                             "popcnt", "movbe",      "amx",  "xop", "adx",  "aes",  "vaes",
                             "pclmul", "vpclmulqdq", "gfni", "sha", "cx16", "sahf", "evex512"})
    if (feature.rfind(prefix, 0) == 0) return true;
  return false;
}

// The features `cpu` implies that this machine's CPU lacks (sorted).
std::vector<std::string> missing_features(const llvm::Triple& triple, const std::string& cpu,
                                          const std::string& where) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), error);
  if (!target)
    throw Error(
        fmt::format("lower: no target for this CPU to compile {}: {}", program_name(where), error));
  // Asked of the generic CPU first: LLVM warns on stderr when made for a CPU it does not know.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple.str(), "", ""));
  if (!generic || !generic->isCPUStringValid(cpu))
    throw UsageError(fmt::format(
        "{}={}: not a CPU LLVM knows; use native, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM "
        "CPU name such as skylake-avx512",
        kTargetCpuVariable, cpu));
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple.str(), cpu, ""));
  std::vector<std::string> missing;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (feature.getValue()) continue;
    std::string enabled = "+";
    enabled += feature.getKey();
    if (info->checkFeatures(enabled)) missing.push_back(feature.getKey().str());
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

}  // namespace

std::string jit_target_cpu() {
  const char* named = std::getenv(kTargetCpuVariable);
  return named && *named ? std::string(named) : std::string("native");
}

std::unique_ptr<llvm::TargetMachine> jit_target_machine(const std::string& where) {
  auto fail = [&](llvm::Error e) {
    return Error(fmt::format("lower: no target for this CPU to compile {}: {}", program_name(where),
                             llvm::toString(std::move(e))));
  };
  // The native target only: a program found in the compilation cache needs nothing else.
  static std::once_flag native_target;
  std::call_once(native_target, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();  // the host's CPU and features
  if (!builder) throw fail(builder.takeError());
  const std::string cpu = jit_target_cpu();
  if (cpu != "native") {
    const std::vector<std::string> missing =
        missing_features(builder->getTargetTriple(), cpu, where);
    std::vector<std::string> refused;
    for (const std::string& f : missing)
      if (is_instruction_set(f)) refused.push_back(f);
    if (!refused.empty())
      throw UnsupportedError(fmt::format(
          "{}={}: this machine's CPU ({}) lacks {} that it requires ({}): its code could stop on "
          "an illegal instruction here",
          kTargetCpuVariable, cpu, llvm::sys::getHostCPUName().str(),
          refused.size() == 1 ? "an instruction set" : "instruction sets",
          fmt::join(refused, ", ")));
    builder->setCPU(cpu);
    // The named CPU's own features, less the system features this machine hides.
    llvm::SubtargetFeatures features;
    for (const std::string& f : missing) features.AddFeature(f, false);
    builder->getFeatures() = features;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine) throw fail(machine.takeError());
  return std::move(*machine);
}

}  // namespace cjax::lower
