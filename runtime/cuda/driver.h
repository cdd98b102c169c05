// The CUDA driver API, loaded at run time from libcuda.so.1: cjax builds, and runs on the CPU,
// on machines without CUDA or a GPU; only a GPU program needs the driver, and where there is
// none it gets a clear cjax::UnsupportedError ("no CUDA device: ..."), never a crash. The few
// driver types used are declared here, so no CUDA header is needed to build either.
#pragma once

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

struct DeviceMemoryStats {
  size_t live_bytes = 0, peak_bytes = 0;
};
DeviceMemoryStats device_memory_stats();

}  // namespace cjax::runtime::cuda
