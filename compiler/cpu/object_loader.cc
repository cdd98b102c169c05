#include "compiler/cpu/object_loader.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Support/MemoryBuffer.h>

#include "compiler/cpu/mlir_pipeline.h"
#include "compiler/cpu/runtime_symbols.h"
#include "ir/errors.h"

namespace cjax::lower {
namespace {

std::string program_name(const std::string& where) {
  return where.empty() ? "the program" : where;
}

}  // namespace

llvm::orc::SymbolMap runtime_symbol_map(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap map;
  for (auto [name, address] : runtime_symbols())
    map[interner(llvm::StringRef(name.data(), name.size()))] = {
        llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
  for (const auto& [name, address] : async_runtime_symbols())
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                           llvm::JITSymbolFlags::Exported};
  return map;
}

std::unique_ptr<llvm::orc::LLJIT> link_object(const std::string& object, const std::string& where) {
  auto fail = [&](llvm::Error e) {
    return Error(fmt::format("lower: cached object code for {} does not link: {}",
                             program_name(where), llvm::toString(std::move(e))));
  };
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host) throw fail(host.takeError());
  // The linking layer MLIR's ExecutionEngine uses, so cached code is linked as fresh code is.
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*host))
          .setObjectLinkingLayerCreator(
              [](llvm::orc::ExecutionSession& session,
                 const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                    session, [] { return std::make_unique<llvm::SectionMemoryManager>(); });
              })
          .create();
  if (!jit) throw fail(jit.takeError());
  llvm::orc::JITDylib& main = (*jit)->getMainJITDylib();
  llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(), (*jit)->getDataLayout());
  if (llvm::Error e = main.define(llvm::orc::absoluteSymbols(runtime_symbol_map(interner))))
    throw fail(std::move(e));
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) throw fail(process.takeError());
  main.addGenerator(std::move(*process));
  if (llvm::Error e =
          (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "cjax-cached-object")))
    throw fail(std::move(e));
  return std::move(*jit);
}

PackedEntry packed_entry(llvm::orc::LLJIT& jit, const std::string& name, const std::string& where) {
  // MLIR's ExecutionEngine names the packed wrapper of `f` `_mlir_f`; the C interface's is
  // `_mlir_ciface_f`.
  auto address = jit.lookup("_mlir__mlir_ciface_" + name);
  if (!address)
    throw Error(fmt::format("lower: the JIT could not link {}: {}", program_name(where),
                            llvm::toString(address.takeError())));
  return address->toPtr<PackedEntry>();
}

}  // namespace cjax::lower
