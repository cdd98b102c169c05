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

// Calls `entry` (compiled code) with `args` on this thread. Should one of the code's own
// allocations fail, the call stops there: compiled code can neither take a null buffer nor
// unwind, so cjax_alloc jumps back here, the blocks the call had allocated are freed, and the
// failure waits in take_runtime_error. Returns whether the code ran to its end.
bool run_compiled(void (*entry)(void**), void** args);

// An exception a runtime call raised during the last compiled call on this thread (compiled
// code has no unwinding, so calls record it and return); null when none. Clears it.
std::exception_ptr take_runtime_error();

}  // namespace cjax::lower
