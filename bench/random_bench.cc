// Issue 23's figure: random bits per second from `random::bits(key, (1 << 24,))` compiled (the
// threefry loop cjax lowers natively) and on the interpreter's kernel, beside numpy's default
// generator, PCG64, as its C core runs (a 128-bit LCG stepped, then XSL-RR output, 64 bits per
// step), written here in C++ since the machines have no numpy. Each reports bytes per second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "cjax/api.h"
#include "compiler/cpu/cpu_backend.h"

namespace cjax::bench {
namespace {

constexpr int64_t kBits32 = int64_t{1} << 24;  // 2^24 u32 values: 64 MiB of bits

void BM_threefry_bits_compiled(benchmark::State& state) {
  install_cpu_backend();
  random::set_threefry_partitionable(true);
  auto draw = jit([](const Array& k) { return random::bits(k, {kBits32}); });
  const Array key = random::key(0);
  benchmark::DoNotOptimize(draw(key));  // compile
  for (auto _ : state) benchmark::DoNotOptimize(draw(key));
  state.SetBytesProcessed(state.iterations() * kBits32 * 4);
}
BENCHMARK(BM_threefry_bits_compiled)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_threefry_bits_interpreter(benchmark::State& state) {
  random::set_threefry_partitionable(true);
  UseInterpreter interp;
  const Array key = random::key(0);
  for (auto _ : state) benchmark::DoNotOptimize(random::bits(key, {kBits32}));
  state.SetBytesProcessed(state.iterations() * kBits32 * 4);
}
BENCHMARK(BM_threefry_bits_interpreter)->Unit(benchmark::kMillisecond)->UseRealTime();

// numpy's PCG64 (pcg_setseq_128_xsl_rr_64): state = state * mult + inc, then the high and low
// halves xored and rotated right by the state's top 6 bits.
__extension__ using u128 = unsigned __int128;
struct Pcg64 {
  u128 state, inc;
  uint64_t next() {
    static const u128 mult = (u128{0x2360ED051FC65DA4ull} << 64) | 0x4385DF649FCCF645ull;
    state = state * mult + inc;
    const uint64_t x = uint64_t(state >> 64) ^ uint64_t(state);
    const unsigned rot = unsigned(state >> 122);
    return (x >> rot) | (x << ((64 - rot) & 63));
  }
};

void BM_pcg64_numpy_peer(benchmark::State& state) {
  Pcg64 rng{(u128{0x853C49E6748FEA9Bull} << 64) | 0xDA3E39CB94B95BDBull,
            ((u128{0x5851F42D4C957F2Dull} << 64) | 0x14057B7EF767814Full) | 1};
  std::vector<uint64_t> out(size_t(kBits32 / 2));  // the same number of bits
  for (auto _ : state) {
    for (uint64_t& v : out) v = rng.next();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBits32 * 4);
}
BENCHMARK(BM_pcg64_numpy_peer)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace cjax::bench

BENCHMARK_MAIN();
