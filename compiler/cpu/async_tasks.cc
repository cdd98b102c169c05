#include "compiler/cpu/async_tasks.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace cjax::lower {
namespace {

using CoroHandle = void*;
using CoroResume = void (*)(void*);

// Never destroyed: workers may still finish tasks while the process's statics are torn down.
std::mutex& mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::condition_variable& idle() {
  static auto* cv = new std::condition_variable;
  return *cv;
}
size_t in_flight = 0;  // guarded by mutex()

// What the runtime resumes in place of compiled code: the compiled coroutine, then the count.
struct Task {
  CoroHandle handle;
  CoroResume resume;
};

void run_task(void* p) {
  Task task = *static_cast<Task*>(p);
  delete static_cast<Task*>(p);
  task.resume(task.handle);  // back from compiled code
  std::lock_guard<std::mutex> lock(mutex());
  if (--in_flight == 0) idle().notify_all();
}

Task* new_task(CoroHandle handle, CoroResume resume) {
  {
    std::lock_guard<std::mutex> lock(mutex());
    ++in_flight;
  }
  return new Task{handle, resume};
}

// The runtime's own functions, and the wrappers compiled code calls instead.
void (*real_execute)(CoroHandle, CoroResume) = nullptr;
void (*real_await_token)(void*, CoroHandle, CoroResume) = nullptr;
void (*real_await_value)(void*, CoroHandle, CoroResume) = nullptr;
void (*real_await_group)(void*, CoroHandle, CoroResume) = nullptr;

void execute(CoroHandle handle, CoroResume resume) {
  real_execute(new_task(handle, resume), run_task);
}
void await_token(void* token, CoroHandle handle, CoroResume resume) {
  real_await_token(token, new_task(handle, resume), run_task);
}
void await_value(void* value, CoroHandle handle, CoroResume resume) {
  real_await_value(value, new_task(handle, resume), run_task);
}
void await_group(void* group, CoroHandle handle, CoroResume resume) {
  real_await_group(group, new_task(handle, resume), run_task);
}

template <class Fn>
void* wrap(void* real, Fn*& slot, Fn* wrapper) {
  slot = reinterpret_cast<Fn*>(real);
  return reinterpret_cast<void*>(wrapper);
}

}  // namespace

std::vector<std::pair<std::string, void*>> count_async_tasks(
    std::vector<std::pair<std::string, void*>> symbols) {
  for (auto& [name, address] : symbols) {
    if (name == "mlirAsyncRuntimeExecute")
      address = wrap(address, real_execute, execute);
    else if (name == "mlirAsyncRuntimeAwaitTokenAndExecute")
      address = wrap(address, real_await_token, await_token);
    else if (name == "mlirAsyncRuntimeAwaitValueAndExecute")
      address = wrap(address, real_await_value, await_value);
    else if (name == "mlirAsyncRuntimeAwaitAllInGroupAndExecute")
      address = wrap(address, real_await_group, await_group);
  }
  return symbols;
}

void wait_for_async_tasks() {
  std::unique_lock<std::mutex> lock(mutex());
  idle().wait(lock, [] { return in_flight == 0; });
}

}  // namespace cjax::lower
