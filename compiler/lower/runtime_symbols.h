// The C functions compiled code calls: the runtime-call trampoline and the allocator that
// memref.alloc lowers to (so compiled code's buffers count in runtime::memory_stats()).
#pragma once

#include <exception>
#include <string_view>
#include <utility>
#include <vector>

namespace cjax::lower {

// (symbol name, address) for every C function the JIT must resolve.
std::vector<std::pair<std::string_view, void*>> runtime_symbols();

// An exception a runtime call raised during the last compiled call on this thread (compiled
// code has no unwinding, so calls record it and return); null when none. Clears it.
std::exception_ptr take_runtime_error();

}  // namespace cjax::lower
