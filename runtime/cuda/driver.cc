#include "runtime/cuda/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "ir/errors.h"

namespace cjax::runtime::cuda {
namespace {

// The driver API's types, as its ABI defines them.
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;  // NOLINT: the ABI's type
constexpr CUresult kSuccess = 0;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

// The entry points cjax uses, resolved once from libcuda.so.1 (versioned names where the
// driver exports _v2 variants).
struct Api {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, void*, void**, void**) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*stream_create)(void**, unsigned) = nullptr;
  CUresult (*stream_destroy)(void*) = nullptr;
  CUresult (*stream_synchronize)(void*) = nullptr;
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void*, size_t, void*) = nullptr;
  CUresult (*memcpy_dtoh_async)(void*, CUdeviceptr, size_t, void*) = nullptr;
  CUresult (*begin_capture)(void*, int) = nullptr;
  CUresult (*end_capture)(void*, void**) = nullptr;
  CUresult (*graph_instantiate)(void**, void*, unsigned long long) = nullptr;  // NOLINT: ABI
  CUresult (*graph_launch)(void*, void*) = nullptr;
  CUresult (*graph_destroy)(void*) = nullptr;
  CUresult (*graph_exec_destroy)(void*) = nullptr;
  CUresult (*event_create)(void**, unsigned) = nullptr;
  CUresult (*event_destroy)(void*) = nullptr;
  CUresult (*event_record)(void*, void*) = nullptr;
  CUresult (*stream_wait_event)(void*, void*, unsigned) = nullptr;
  CUresult (*mem_alloc_host)(void**, size_t) = nullptr;
  CUresult (*mem_free_host)(void*) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  std::string unavailable;  // why the API cannot be used, or empty
  int devices = 0;
};

template <class F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

const Api& api() {
  static const Api a = [] {
    Api a;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.unavailable = "libcuda.so.1 (the NVIDIA driver) is not installed";
      return a;
    }
    bool ok = resolve(lib, "cuInit", a.init) && resolve(lib, "cuDeviceGetCount", a.device_count) &&
              resolve(lib, "cuDeviceGet", a.device_get) &&
              resolve(lib, "cuDeviceGetName", a.device_name) &&
              resolve(lib, "cuDeviceGetAttribute", a.device_attribute) &&
              resolve(lib, "cuDeviceTotalMem_v2", a.device_total_mem) &&
              resolve(lib, "cuDevicePrimaryCtxRetain", a.primary_ctx_retain) &&
              resolve(lib, "cuCtxSetCurrent", a.ctx_set_current) &&
              resolve(lib, "cuModuleLoadData", a.module_load_data) &&
              resolve(lib, "cuModuleUnload", a.module_unload) &&
              resolve(lib, "cuModuleGetFunction", a.module_get_function) &&
              resolve(lib, "cuMemAlloc_v2", a.mem_alloc) &&
              resolve(lib, "cuMemFree_v2", a.mem_free) &&
              resolve(lib, "cuMemcpyHtoD_v2", a.memcpy_htod) &&
              resolve(lib, "cuMemcpyDtoH_v2", a.memcpy_dtoh) &&
              resolve(lib, "cuMemcpyDtoD_v2", a.memcpy_dtod) &&
              resolve(lib, "cuLaunchKernel", a.launch_kernel) &&
              resolve(lib, "cuCtxSynchronize", a.ctx_synchronize) &&
              resolve(lib, "cuStreamCreate", a.stream_create) &&
              resolve(lib, "cuStreamDestroy_v2", a.stream_destroy) &&
              resolve(lib, "cuStreamSynchronize", a.stream_synchronize) &&
              resolve(lib, "cuMemcpyHtoDAsync_v2", a.memcpy_htod_async) &&
              resolve(lib, "cuMemcpyDtoHAsync_v2", a.memcpy_dtoh_async) &&
              resolve(lib, "cuStreamBeginCapture_v2", a.begin_capture) &&
              resolve(lib, "cuStreamEndCapture", a.end_capture) &&
              resolve(lib, "cuGraphInstantiateWithFlags", a.graph_instantiate) &&
              resolve(lib, "cuGraphLaunch", a.graph_launch) &&
              resolve(lib, "cuGraphDestroy", a.graph_destroy) &&
              resolve(lib, "cuGraphExecDestroy", a.graph_exec_destroy) &&
              resolve(lib, "cuEventCreate", a.event_create) &&
              resolve(lib, "cuEventDestroy_v2", a.event_destroy) &&
              resolve(lib, "cuEventRecord", a.event_record) &&
              resolve(lib, "cuStreamWaitEvent", a.stream_wait_event) &&
              resolve(lib, "cuMemAllocHost_v2", a.mem_alloc_host) &&
              resolve(lib, "cuMemFreeHost", a.mem_free_host) &&
              resolve(lib, "cuGetErrorString", a.error_string);
    if (!ok) {
      a.unavailable = "libcuda.so.1 lacks a driver API function cjax needs (driver too old?)";
      return a;
    }
    if (CUresult r = a.init(0); r != kSuccess) {
      a.unavailable = fmt::format("cuInit failed with CUDA error {}", r);
      return a;
    }
    if (a.device_count(&a.devices) != kSuccess || a.devices == 0)
      a.unavailable = "the driver reports no device";
    return a;
  }();
  return a;
}

[[noreturn]] void fail(const std::string& what, CUresult r) {
  const char* text = nullptr;
  if (api().error_string) api().error_string(r, &text);
  throw Error(fmt::format("cuda: {} failed: {} (CUDA error {})", what, text ? text : "unknown", r));
}

void check(CUresult r, const std::string& what) {
  if (r != kSuccess) fail(what, r);
}

const Api& require(int ordinal) {
  const Api& a = api();
  if (!a.unavailable.empty()) throw UnsupportedError("no CUDA device: " + a.unavailable);
  if (ordinal < 0 || ordinal >= a.devices)
    throw UnsupportedError(
        fmt::format("no CUDA device {}: this machine has {} device(s)", ordinal, a.devices));
  return a;
}

// Makes device `ordinal`'s primary context current on this thread.
void use_device(int ordinal) {
  const Api& a = require(ordinal);
  CUdevice dev = 0;
  check(a.device_get(&dev, ordinal), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(a.primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(a.ctx_set_current(ctx), "cuCtxSetCurrent");
}

std::atomic<size_t> live_bytes{0}, peak_bytes{0};

}  // namespace

std::optional<std::string> unavailable_reason() {
  const Api& a = api();
  if (a.unavailable.empty()) return std::nullopt;
  return a.unavailable;
}

DeviceInfo device_info(int ordinal) {
  const Api& a = require(ordinal);
  CUdevice dev = 0;
  check(a.device_get(&dev, ordinal), "cuDeviceGet");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(a.device_name(name, sizeof(name) - 1, dev), "cuDeviceGetName");
  info.name = name;
  check(a.device_attribute(&info.compute_major, kComputeCapabilityMajor, dev),
        "cuDeviceGetAttribute");
  check(a.device_attribute(&info.compute_minor, kComputeCapabilityMinor, dev),
        "cuDeviceGetAttribute");
  check(a.device_total_mem(&info.total_bytes, dev), "cuDeviceTotalMem");
  return info;
}

Module Module::load_ptx(const std::string& ptx, int ordinal) {
  use_device(ordinal);
  Module m;
  check(api().module_load_data(&m.module_, ptx.c_str()), "loading a PTX module");
  return m;
}

Module::~Module() {
  if (module_) api().module_unload(module_);
}
Module::Module(Module&& o) noexcept : module_(std::exchange(o.module_, nullptr)) {}
Module& Module::operator=(Module&& o) noexcept {
  std::swap(module_, o.module_);
  return *this;
}

bool Module::has_function(const std::string& name) const {
  CUfunction f = nullptr;
  return module_ && api().module_get_function(&f, module_, name.c_str()) == kSuccess;
}

void make_current(int ordinal) {
  use_device(ordinal);
}

void* Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  check(api().module_get_function(&f, module_, name.c_str()),
        fmt::format("finding kernel {} in its module", name));
  return f;
}

Stream Stream::create(int ordinal) {
  use_device(ordinal);
  Stream s;
  check(api().stream_create(&s.stream_, 1 /* CU_STREAM_NON_BLOCKING */), "creating a stream");
  return s;
}
Stream::~Stream() {
  if (stream_) api().stream_destroy(stream_);
}
Stream::Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
Stream& Stream::operator=(Stream&& o) noexcept {
  std::swap(stream_, o.stream_);
  return *this;
}
void Stream::synchronize() const {
  check(api().stream_synchronize(stream_), "running the GPU's kernels");
}
void Stream::copy_to_device(uint64_t dst, const void* src, size_t bytes) const {
  check(api().memcpy_htod_async(dst, src, bytes, stream_), "copying to the device");
}
void Stream::copy_to_host(void* dst, uint64_t src, size_t bytes) const {
  check(api().memcpy_dtoh_async(dst, src, bytes, stream_), "copying from the device");
}
void Stream::begin_capture() const {
  // Relaxed: cuBLAS may query the device while its calls are recorded.
  check(api().begin_capture(stream_, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */),
        "starting a graph capture");
}
Graph Stream::end_capture() const {
  Graph g;
  check(api().end_capture(stream_, &g.graph_), "ending a graph capture");
  check(api().graph_instantiate(&g.exec_, g.graph_, 0), "instantiating a graph");
  return g;
}

void Stream::wait(const Event& e) const {
  check(api().stream_wait_event(stream_, e.handle(), 0), "making a stream wait for an event");
}

Event Event::create(int ordinal) {
  use_device(ordinal);
  Event e;
  check(api().event_create(&e.event_, 2 /* CU_EVENT_DISABLE_TIMING */), "creating an event");
  return e;
}
Event::~Event() {
  if (event_) api().event_destroy(event_);
}
Event::Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
Event& Event::operator=(Event&& o) noexcept {
  std::swap(event_, o.event_);
  return *this;
}
void Event::record(const Stream& s) const {
  check(api().event_record(event_, s.handle()), "recording an event");
}

PinnedBuffer PinnedBuffer::allocate(size_t bytes, int ordinal) {
  use_device(ordinal);
  PinnedBuffer b;
  check(api().mem_alloc_host(&b.data_, std::max<size_t>(bytes, 1)),
        fmt::format("allocating {} bytes of pinned host memory", bytes));
  b.bytes_ = bytes;
  return b;
}
PinnedBuffer::~PinnedBuffer() {
  if (data_) api().mem_free_host(data_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

Graph::~Graph() {
  if (exec_) api().graph_exec_destroy(exec_);
  if (graph_) api().graph_destroy(graph_);
}
Graph::Graph(Graph&& o) noexcept
    : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
Graph& Graph::operator=(Graph&& o) noexcept {
  std::swap(graph_, o.graph_);
  std::swap(exec_, o.exec_);
  return *this;
}
void Graph::launch(const Stream& stream) const {
  check(api().graph_launch(exec_, stream.handle()), "launching a graph");
}

void launch(void* function, const std::array<uint32_t, 3>& grid,
            const std::array<uint32_t, 3>& block, void** params, const Stream* stream) {
  check(api().launch_kernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                            stream ? stream->handle() : nullptr, params, nullptr),
        fmt::format("launching a kernel on a grid of {}x{}x{} blocks of {}x{}x{} threads", grid[0],
                    grid[1], grid[2], block[0], block[1], block[2]));
}

void synchronize() {
  check(api().ctx_synchronize(), "running the GPU's kernels");
}

void copy_device_to_device(uint64_t dst, uint64_t src, size_t bytes) {
  check(api().memcpy_dtod(dst, src, bytes), "copying on the device");
}
void copy_host_to_device(uint64_t dst, const void* src, size_t bytes) {
  check(api().memcpy_htod(dst, src, bytes), "copying to the device");
}
void copy_device_to_host(void* dst, uint64_t src, size_t bytes) {
  check(api().memcpy_dtoh(dst, src, bytes), "copying from the device");
}

DeviceBuffer DeviceBuffer::allocate(size_t bytes, int ordinal) {
  use_device(ordinal);
  DeviceBuffer b;
  CUdeviceptr p = 0;
  check(api().mem_alloc(&p, bytes), fmt::format("allocating {} bytes on the device", bytes));
  b.ptr_ = p;
  b.bytes_ = bytes;
  const size_t now = live_bytes += bytes;
  for (size_t peak = peak_bytes; now > peak && !peak_bytes.compare_exchange_weak(peak, now);) {
  }
  return b;
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_) return;
  api().mem_free(ptr_);
  live_bytes -= bytes_;
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

void DeviceBuffer::copy_from_host(const void* src, size_t bytes) {
  if (bytes > bytes_)
    throw Error(fmt::format("cuda: copying {} bytes into a {}-byte device buffer", bytes, bytes_));
  check(api().memcpy_htod(ptr_, src, bytes), "copying to the device");
}

void DeviceBuffer::copy_to_host(void* dst, size_t bytes) const {
  if (bytes > bytes_)
    throw Error(
        fmt::format("cuda: copying {} bytes out of a {}-byte device buffer", bytes, bytes_));
  check(api().memcpy_dtoh(dst, ptr_, bytes), "copying from the device");
}

DeviceMemoryStats device_memory_stats() {
  return {live_bytes.load(), peak_bytes.load()};
}

}  // namespace cjax::runtime::cuda
