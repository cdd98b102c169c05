// The CUDA driver loaded at run time: without a driver or a device every entry point is a clear
// "no CUDA device" error; with one, device memory round-trips, is counted, and PTX loads.
#include <catch2/catch.hpp>

#include <vector>

#include "ir/errors.h"
#include "runtime/cuda/driver.h"

namespace cjax::runtime::cuda {
namespace {

// An empty kernel for any GPU since Maxwell (the driver compiles it for the device at hand).
constexpr const char* kNoopPtx =
    ".version 7.8\n.target sm_52\n.address_size 64\n.visible .entry noop()\n{\n\tret;\n}\n";

TEST_CASE("without a CUDA device every entry point says so, and nothing crashes") {
  const auto why = unavailable_reason();
  if (!why) {
    WARN("a CUDA device is present: the no-device path is not exercised here");
    return;
  }
  CHECK_FALSE(why->empty());
  REQUIRE_THROWS_AS(device_info(), UnsupportedError);
  REQUIRE_THROWS_WITH(device_info(), Catch::StartsWith("no CUDA device: "));
  REQUIRE_THROWS_WITH(DeviceBuffer::allocate(1024), Catch::StartsWith("no CUDA device: "));
  REQUIRE_THROWS_WITH(Module::load_ptx(kNoopPtx), Catch::StartsWith("no CUDA device: "));
}

TEST_CASE("on a CUDA device: properties, counted memory round trips, PTX modules") {
  if (const auto why = unavailable_reason()) {
    WARN("skipped, no CUDA device: " << *why);
    return;
  }
  const DeviceInfo info = device_info();
  CHECK_FALSE(info.name.empty());
  CHECK(info.compute_major >= 5);
  CHECK(info.total_bytes > 0);
  REQUIRE_THROWS_WITH(device_info(1 << 20), Catch::Contains("no CUDA device"));

  std::vector<float> host(1 << 18), back(1 << 18);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  const size_t before = device_memory_stats().live_bytes;
  {
    DeviceBuffer b = DeviceBuffer::allocate(host.size() * sizeof(float));
    CHECK(device_memory_stats().live_bytes == before + (1 << 20));
    CHECK(device_memory_stats().peak_bytes >= before + (1 << 20));
    b.copy_from_host(host.data(), host.size() * sizeof(float));
    b.copy_to_host(back.data(), back.size() * sizeof(float));
    REQUIRE_THROWS_AS(b.copy_from_host(host.data(), (1 << 20) + 4), Error);
  }
  CHECK(back == host);
  CHECK(device_memory_stats().live_bytes == before);

  Module m = Module::load_ptx(kNoopPtx);
  CHECK(m.has_function("noop"));
  CHECK_FALSE(m.has_function("absent"));
  REQUIRE_THROWS_WITH(Module::load_ptx(".version 7.8\n.target sm_52\nnot ptx\n"),
                      Catch::Contains("loading a PTX module failed"));
}

}  // namespace
}  // namespace cjax::runtime::cuda
