// The CUDA driver API, loaded at run time from libcuda.so.1: cjax builds, and runs on the CPU,
// on machines without CUDA or a GPU; only a GPU program needs the driver, and where there is
// none it gets a clear cjax::UnsupportedError ("no CUDA device: ..."), never a crash. The few
// driver types used are declared here, so no CUDA header is needed to build either.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cjax::runtime::cuda {

// Why no CUDA device can be used here (no driver library, no device, an initialization error),
// or nothing when one can.
std::optional<std::string> unavailable_reason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;  // 9.0 for H100/H200 (sm_90)
  size_t total_bytes = 0;
};

// Device `ordinal`'s properties; throws cjax::UnsupportedError when unavailable_reason() says why.
DeviceInfo device_info(int ordinal = 0);

// A module of kernels loaded from PTX (the driver JIT-compiles it for the device), in the
// device's primary context. Throws cjax::Error with the driver's message when the PTX is rejected.
class Module {
 public:
  static Module load_ptx(const std::string& ptx, int ordinal = 0);
  ~Module();
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;
  bool has_function(const std::string& name) const;
  // The kernel `name` (a CUfunction), for launch(); throws cjax::Error when the module lacks it.
  void* function(const std::string& name) const;

 private:
  Module() = default;
  void* module_ = nullptr;
};

// Device memory, counted: live and peak bytes of every DeviceBuffer alive.
class DeviceBuffer {
 public:
  static DeviceBuffer allocate(size_t bytes, int ordinal = 0);
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&&) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) noexcept;

  void copy_from_host(const void* src, size_t bytes);
  void copy_to_host(void* dst, size_t bytes) const;
  uint64_t address() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  uint64_t ptr_ = 0;
  size_t bytes_ = 0;
};

// Makes device `ordinal`'s primary context current on this thread (each entry point below runs
// in the current context).
void make_current(int ordinal = 0);

class Graph;
class Event;

// A stream of work (kernels, copies, cuBLAS calls) in device `ordinal`'s primary context, which
// can be captured into a CUDA graph and replayed.
class Stream {
 public:
  static Stream create(int ordinal = 0);
  Stream() = default;
  ~Stream();
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  void* handle() const { return stream_; }
  void synchronize() const;
  // Copies in stream order (from pageable host memory the driver stages them).
  void copy_to_device(uint64_t dst, const void* src, size_t bytes) const;
  void copy_to_host(void* dst, uint64_t src, size_t bytes) const;
  // Work enqueued between these is recorded, not run, and comes back as a graph to replay.
  void begin_capture() const;
  Graph end_capture() const;
  // Work enqueued on this stream from now on waits for `e` (recorded on another stream).
  void wait(const Event& e) const;

 private:
  void* stream_ = nullptr;
};

// A point in a stream's work, for another stream to wait on.
class Event {
 public:
  static Event create(int ordinal = 0);
  Event() = default;
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  void record(const Stream& s) const;
  void* handle() const { return event_; }

 private:
  void* event_ = nullptr;
};

// Page-locked host memory, which the GPU's copy engines read and write without staging, while
// kernels run (what offloaded residuals live in). Counted apart from device memory.
class PinnedBuffer {
 public:
  static PinnedBuffer allocate(size_t bytes, int ordinal = 0);
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&&) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&&) noexcept;
  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// An instantiated CUDA graph: the kernels, copies and library calls of one capture, replayed by
// one launch.
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  void launch(const Stream& stream) const;
  explicit operator bool() const { return exec_ != nullptr; }

 private:
  friend class Stream;
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};

// Launches `function` on `stream` (null: the context's default stream); `params` points at each
// kernel parameter's value (the driver reads as many bytes as the parameter has).
void launch(void* function, const std::array<uint32_t, 3>& grid,
            const std::array<uint32_t, 3>& block, void** params, const Stream* stream = nullptr);
// Waits for everything launched so far; throws cjax::Error with the driver's message when a
// kernel failed.
void synchronize();
// Copies between device addresses, or from and to the host at an offset (DeviceBuffer's copies
// start at its beginning).
void copy_device_to_device(uint64_t dst, uint64_t src, size_t bytes);
void copy_host_to_device(uint64_t dst, const void* src, size_t bytes);
void copy_device_to_host(void* dst, uint64_t src, size_t bytes);

struct DeviceMemoryStats {
  size_t live_bytes = 0, peak_bytes = 0;
};
DeviceMemoryStats device_memory_stats();

}  // namespace cjax::runtime::cuda
