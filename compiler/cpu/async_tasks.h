// Knowing when MLIR's async runtime has left compiled code. Parallel loops run as tasks on the
// runtime's worker threads; a task wakes the waiting caller when it finishes its work but then
// still runs a few instructions of compiled code (dropping references, returning) before it
// returns to the runtime. An Executable destroyed in that window would unmap code a worker is
// executing. So every function by which compiled code hands the runtime a task to resume goes
// through a wrapper that counts the tasks in flight, and an Executable is destroyed only once
// none is. No MLIR header is included here.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cjax::lower {

// The runtime's symbols with its four task-scheduling functions (mlirAsyncRuntimeExecute and
// the three Await*AndExecute) replaced by counting wrappers; the others as given.
std::vector<std::pair<std::string, void*>> count_async_tasks(
    std::vector<std::pair<std::string, void*>> symbols);

// Blocks until no task handed to the runtime through the wrappers is scheduled or running.
void wait_for_async_tasks();

}  // namespace cjax::lower
