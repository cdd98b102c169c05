// The persistent compilation cache (compiler/cpu/object_cache.h): a second compile of the same
// program loads the plan and object code the first stored (found by the program's text, before
// any lowering, or by the lowered module) and computes the same bits; corrupt, truncated and
// foreign entries are detected, removed and rebuilt, never loaded; concurrent writers leave a
// whole entry; CJAX_CACHE_DIR=off stores nothing; another target CPU is another entry.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cjax/api.h"
#include "compiler/cpu/executable.h"
#include "compiler/cpu/object_cache.h"
#include "compiler/cpu/program_plan.h"
#include "ir/parse/parser.h"
#include "runtime/interpreter.h"
#include "tests/cpu/compare.h"

namespace cjax {
namespace {

namespace fs = std::filesystem;
namespace jnp = cjax::numpy;

// Sets an environment variable for the scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh folder for one test's cache, removed afterwards.
struct CacheDir {
  fs::path path;
  ScopedEnv env;
  explicit CacheDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("cjax-cache-test-" + name + "-" + std::to_string(getpid()))),
        env(lower::kCacheDirVariable, path.string()) {
    fs::remove_all(path);
  }
  ~CacheDir() { fs::remove_all(path); }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (fs::exists(path))
      for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path());
    return out;
  }
};

// A program with a loop nest, a BLAS call and a reduction, different for each `scale` (so tests
// running at the same time never share an entry).
Jaxpr program(double scale) {
  auto f = [scale](const Array& w, const Array& x) {
    return jnp::sum(jnp::tanh(jnp::matmul(x, w) * scale));
  };
  return make_jaxpr(grad(f, argnums<0, 1>))(jnp::ones({32, 32}), jnp::ones({16, 32}));
}

void require_same_bits(const std::vector<runtime::Buffer>& a,
                       const std::vector<runtime::Buffer>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].nbytes() == b[i].nbytes());
    CHECK(std::memcmp(a[i].data(), b[i].data(), a[i].nbytes()) == 0);
  }
}

TEST_CASE("a second compile loads the object code the first stored, and computes the same bits") {
  CacheDir dir("reuse");
  const Jaxpr j = program(1.5);
  const auto inputs = test::random_inputs(j, -1, 1, 7);
  auto first = lower::compile(j, "cached");
  CHECK_FALSE(first->compile_stats().from_cache);
  REQUIRE(dir.entries().size() == 1);
  auto second = lower::compile(j, "cached");
  CHECK(second->compile_stats().from_cache);
  CHECK(second->compile_stats().optimize_ms == 0);  // MLIR's passes and LLVM were skipped
  CHECK(second->compile_stats().jit_ms == 0);
  CHECK(second->compile_stats().runtime_calls == first->compile_stats().runtime_calls);
  require_same_bits(second->run(inputs), first->run(inputs));
  const auto want = runtime::eval_jaxpr(j, inputs);  // and both agree with the interpreter
  const auto got = second->run(inputs);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) test::require_close(got[i], want[i]);
}

// A scan over checkpointed layers, differentiated: its backward program holds a checkpoint with a
// policy inside the scan's body (a value no text pins down, which the code does not depend on).
Jaxpr checkpointed_scan_grad(double scale) {
  auto layer = [scale](const Array& h, const Array& w) {
    return std::pair{jnp::tanh(jnp::matmul(h, w) * scale), std::tuple<>{}};
  };
  auto f = [&](const Array& h0, const Array& ws) {
    auto saved = checkpoint(layer, policies::dots_with_no_batch_dims_saveable());
    return jnp::sum(scan(saved, h0, ws).first);
  };
  return make_jaxpr(grad(f, argnums<0, 1>))(jnp::ones({4, 8}), jnp::ones({3, 8, 8}));
}

TEST_CASE("a program is found in the cache before it is lowered, policies and all") {
  CacheDir dir("before-lowering");
  const Jaxpr j = checkpointed_scan_grad(0.5);
  const auto inputs = test::random_inputs(j, -1, 1, 11);
  auto first = lower::compile(j, "scan");
  CHECK(first->compile_stats().keyed_before_lowering);
  CHECK_FALSE(first->compile_stats().from_cache);
  auto second = lower::compile(j, "scan");
  CHECK(second->compile_stats().keyed_before_lowering);
  REQUIRE(second->compile_stats().from_cache);
  // The plan read from the entry: the same functions, steps and runtime calls as the lowering's.
  CHECK(second->compile_stats().functions == first->compile_stats().functions);
  CHECK(second->compile_stats().steps == first->compile_stats().steps);
  CHECK(second->compile_stats().runtime_calls == first->compile_stats().runtime_calls);
  require_same_bits(second->run(inputs), first->run(inputs));
  // Another scale is another program: another entry.
  CHECK_FALSE(lower::compile(checkpointed_scan_grad(0.25), "scan")->compile_stats().from_cache);
  CHECK(dir.entries().size() == 2);
}

TEST_CASE("a program holding an opaque parameter is keyed by its lowered module") {
  CacheDir dir("module-key");
  // The parser keeps a parameter value it does not know as an opaque one; the lowering ignores it.
  const JaxprRef j =
      parse_jaxpr("{ lambda ; a:f32[3]. let b:f32[3] = sin[accuracy=Weird(x=1)] a in (b,) }");
  auto first = lower::compile(*j, "opaque");
  CHECK_FALSE(first->compile_stats().keyed_before_lowering);
  auto second = lower::compile(*j, "opaque");
  CHECK(second->compile_stats().from_cache);
  CHECK(second->compile_stats().lower_ms > 0);  // lowered, to find the key
  const std::vector<runtime::Buffer> x = {runtime::Buffer::full(ShapedArray{DType::f32, {3}}, 1.0)};
  require_same_bits(second->run(x), first->run(x));
}

TEST_CASE("a damaged cache entry is removed and rebuilt, never loaded") {
  CacheDir dir("damaged");
  const Jaxpr j = program(2.5);
  const auto inputs = test::random_inputs(j, -1, 1, 8);
  const auto want = lower::compile(j, "damaged")->run(inputs);
  REQUIRE(dir.entries().size() == 1);
  const fs::path entry = dir.entries()[0];
  const auto original_size = fs::file_size(entry);

  auto damage_and_recompile = [&](auto damage) {
    damage();
    auto exe = lower::compile(j, "damaged");
    CHECK_FALSE(exe->compile_stats().from_cache);
    require_same_bits(exe->run(inputs), want);
    REQUIRE(fs::exists(entry));  // rebuilt, whole
    CHECK(fs::file_size(entry) == original_size);
    CHECK(lower::compile(j, "damaged")->compile_stats().from_cache);
  };
  SECTION("a flipped byte in the object code") {
    damage_and_recompile([&] {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(original_size / 2));
      char c = 0;
      f.read(&c, 1);
      f.seekp(static_cast<std::streamoff>(original_size / 2));
      c = static_cast<char>(c ^ 0x5a);
      f.write(&c, 1);
    });
  }
  SECTION("a truncated entry") {
    damage_and_recompile([&] { fs::resize_file(entry, original_size - 100); });
  }
  SECTION("an empty file") {
    damage_and_recompile([&] { fs::resize_file(entry, 0); });
  }
  SECTION("another entry's bytes under this key") {
    damage_and_recompile([&] {
      const std::string key = entry.stem().string();
      std::string other_key = key;
      other_key[0] = other_key[0] == 'a' ? 'b' : 'a';
      lower::store_cached_object(dir.path, other_key, "not object code");
      fs::rename(lower::cached_object_path(dir.path, other_key), entry);
    });
  }
  SECTION("a whole entry that is not a plan and object code") {
    damage_and_recompile([&] {
      lower::store_cached_object(dir.path, entry.stem().string(), "garbage, not an entry");
    });
  }
  // Whole entries (their checksums hold) whose parts are wrong: never run.
  const auto parts = lower::load_cached_object(dir.path, entry.stem().string());
  REQUIRE(parts);
  const auto payload = lower::split_cache_payload(*parts);
  REQUIRE(payload);
  const std::string plan(payload->plan), object(payload->object);
  auto store = [&](const std::string& p, const std::string& o) {
    lower::store_cached_object(dir.path, entry.stem().string(), lower::cache_payload(p, o));
  };
  SECTION("a whole entry whose object code does not link") {
    damage_and_recompile([&] { store(plan, "garbage, not an ELF object"); });
  }
  SECTION("a whole entry whose plan calls a function out of range") {
    const size_t at = plan.find("\nstep ");
    REQUIRE(at != std::string::npos);
    std::string bad = plan;
    bad.replace(at, 7, "\nstep 9");
    damage_and_recompile([&] { store(bad, object); });
  }
  SECTION("a whole entry whose plan is cut short") {
    damage_and_recompile([&] { store(plan.substr(0, plan.size() / 2), object); });
  }
}

TEST_CASE("concurrent writers of one entry leave a whole entry that later compiles load") {
  CacheDir dir("concurrent");
  const Jaxpr j = program(3.5);
  const auto inputs = test::random_inputs(j, -1, 1, 9);
  std::vector<std::shared_ptr<const lower::Executable>> exes(4);
  {
    std::vector<std::thread> writers;
    for (size_t t = 0; t < exes.size(); ++t)
      writers.emplace_back([&, t] { exes[t] = lower::compile(j, "concurrent"); });
    for (std::thread& w : writers) w.join();
  }
  const auto want = exes[0]->run(inputs);
  for (const auto& e : exes) require_same_bits(e->run(inputs), want);
  REQUIRE(dir.entries().size() == 1);  // no temporary file left behind
  auto loaded = lower::compile(j, "concurrent");
  CHECK(loaded->compile_stats().from_cache);
  require_same_bits(loaded->run(inputs), want);

  // Raw stores and loads racing on one key: a reader sees a whole entry or none.
  const std::string key(64, 'c');
  const std::string a(100000, 'a'), b(70000, 'b');
  std::thread w1([&] {
    for (int i = 0; i < 50; ++i) lower::store_cached_object(dir.path, key, a);
  });
  std::thread w2([&] {
    for (int i = 0; i < 50; ++i) lower::store_cached_object(dir.path, key, b);
  });
  for (int i = 0; i < 200; ++i)
    if (auto got = lower::load_cached_object(dir.path, key)) CHECK((*got == a || *got == b));
  w1.join();
  w2.join();
}

TEST_CASE("past its size the cache removes the least recently used entries") {
  CacheDir dir("evict");
  auto key = [](char c) { return std::string(64, c); };
  const std::string object(1000, 'x');
  const auto size = fs::file_size([&] {
    lower::store_cached_object(dir.path, key('a'), object);
    return lower::cached_object_path(dir.path, key('a'));
  }());
  const uintmax_t cap = 3 * size;  // three entries fit
  auto age = [&](char c, int seconds) {
    fs::last_write_time(lower::cached_object_path(dir.path, key(c)),
                        fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
  };
  lower::store_cached_object(dir.path, key('b'), object, cap);
  lower::store_cached_object(dir.path, key('c'), object, cap);
  age('a', 30);
  age('b', 20);
  age('c', 10);
  REQUIRE(lower::load_cached_object(dir.path, key('a')));       // used now: the most recent
  lower::store_cached_object(dir.path, key('d'), object, cap);  // four pass the cap
  CHECK(lower::load_cached_object(dir.path, key('a')));
  CHECK_FALSE(lower::load_cached_object(dir.path, key('b')));  // the least recently used
  CHECK_FALSE(lower::load_cached_object(dir.path, key('c')));  // down to 3/4 of the cap
  CHECK(lower::load_cached_object(dir.path, key('d')));
}

TEST_CASE("CJAX_CACHE_DIR=off stores nothing, another target CPU is another entry") {
  CacheDir dir("off");
  const Jaxpr j = program(4.5);
  {
    ScopedEnv off(lower::kCacheDirVariable, "off");
    CHECK_FALSE(lower::object_cache_dir());
    CHECK_FALSE(lower::compile(j, "off")->compile_stats().from_cache);
  }
  CHECK(dir.entries().empty());
  {
    // Explicitly: scripts/test.sh reruns this suite with CJAX_TARGET_CPU=x86-64-v2 set.
    ScopedEnv native("CJAX_TARGET_CPU", "native");
    CHECK_FALSE(lower::compile(j, "target")->compile_stats().from_cache);
  }
#if defined(__x86_64__)
  {
    ScopedEnv v2("CJAX_TARGET_CPU", "x86-64-v2");  // every x86-64 CPU of this decade runs it
    CHECK_FALSE(lower::compile(j, "target")->compile_stats().from_cache);
    CHECK(lower::compile(j, "target")->compile_stats().from_cache);
  }
  CHECK(dir.entries().size() == 2);
#endif
  {
    ScopedEnv loops("CJAX_MAX_PARALLEL_LOOPS", "0");  // other code: another entry
    CHECK_FALSE(lower::compile(j, "target")->compile_stats().from_cache);
  }
}

TEST_CASE("the cache's folder: CJAX_CACHE_DIR, else XDG_CACHE_HOME/cjax, else ~/.cache/cjax") {
  {
    ScopedEnv named(lower::kCacheDirVariable, "/some/where");
    CHECK(lower::object_cache_dir() == fs::path("/some/where"));
  }
  for (const char* off : {"", "0", "off"}) {
    ScopedEnv named(lower::kCacheDirVariable, off);
    CHECK_FALSE(lower::object_cache_dir());
  }
  const char* named = std::getenv(lower::kCacheDirVariable);
  const std::string saved = named ? named : "";
  unsetenv(lower::kCacheDirVariable);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(lower::object_cache_dir() == fs::path("/xdg/cjax"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", "/home/user");
    CHECK(lower::object_cache_dir() == fs::path("/home/user/.cache/cjax"));
  }
  if (named) setenv(lower::kCacheDirVariable, saved.c_str(), 1);
}

}  // namespace
}  // namespace cjax
