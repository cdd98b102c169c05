// Internal to compiler/cpu/: the symbols compiled code links against, and object code (from the
// persistent compilation cache, compiler/cpu/object_cache.h) linked into this process.
#pragma once

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>

#include <memory>
#include <string>

namespace cjax::lower {

// The runtime's C functions and MLIR's async runtime, by their linker names.
llvm::orc::SymbolMap runtime_symbol_map(llvm::orc::MangleAndInterner interner);

// `object` linked into this process as the JIT would have left it (the runtime's symbols, then
// the process's own). Throws cjax::Error naming `where` when the object does not link.
std::unique_ptr<llvm::orc::LLJIT> link_object(const std::string& object, const std::string& where);

// The packed entry (`void(void**)`) of function `name` compiled with MLIR's C interface.
using PackedEntry = void (*)(void**);
PackedEntry packed_entry(llvm::orc::LLJIT& jit, const std::string& name, const std::string& where);

}  // namespace cjax::lower
