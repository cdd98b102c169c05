// The back end from the CLI: `run` and `grad` on compiled code agree with the interpreter,
// `lower` prints MLIR that mlir-opt-19 accepts, `bench` reports its figures (JSON keys included),
// and bad requests exit with the documented codes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "tests/cli/run_cli.h"

using cli_test::run_cli;

TEST_CASE("a program whose loops ran on worker threads exits cleanly, every time") {
  // Regression: the process exited while an async-runtime worker was still returning through
  // compiled code the exit had just freed, and about one run in ten died of SIGSEGV
  // (compiler/cpu/async_tasks.h). The loop is large enough to be split across the workers.
  const std::string path = std::string(CJAX_BINARY_DIR) + "/parallel_tanh.jaxpr";
  std::ofstream(path) << "{ lambda ; a:f32[64,8192]. let b:f32[64,8192] = tanh a; "
                         "c:f32[64,8192] = mul b a in (c,) }\n";
  for (int i = 0; i < 12; ++i) {
    CAPTURE(i);
    auto r = run_cli("run " + path);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
  }
  std::remove(path.c_str());
}

// The numbers in a command's output, and the text around them with each number replaced by '#'
// and no white space (columns are padded to the widest number, which the last digits change).
struct PrintedValues {
  std::string skeleton;
  std::vector<double> numbers;
};

PrintedValues printed_values(const std::string& text) {
  static const std::regex number(R"([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(inf|nan))");
  PrintedValues v;
  size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it) {
    v.skeleton += text.substr(last, static_cast<size_t>(it->position()) - last) + "#";
    v.numbers.push_back(std::strtod(it->str().c_str(), nullptr));
    last = static_cast<size_t>(it->position() + it->length());
  }
  v.skeleton += text.substr(last);
  std::erase_if(v.skeleton, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return v;
}

TEST_CASE("run and grad print the same values compiled as interpreted") {
  // The JIT targets this machine's CPU (or CJAX_TARGET_CPU's), so vector width and FMA
  // contraction change the last bits from host to host: the values must agree within a relative
  // 1e-5 (absolute 1e-6 near zero), the text around them exactly.
  for (const char* cmd :
       {"run --example tutorial/f --seed 3", "grad --example tutorial/f --seed 3",
        "grad --example tutorial/loss_checkpoint --seed 2",
        "grad --example scan/net_checkpoint --seed 1", "grad --example cond/branches --seed 4",
        "run --example loop/fori --seed 5"}) {
    CAPTURE(cmd);
    auto compiled = run_cli(std::string(cmd));
    auto interpreted = run_cli(std::string(cmd) + " --backend interpreter");
    REQUIRE(compiled.code == 0);
    REQUIRE(interpreted.code == 0);
    const PrintedValues got = printed_values(compiled.out), want = printed_values(interpreted.out);
    CHECK(got.skeleton == want.skeleton);
    REQUIRE(got.numbers.size() == want.numbers.size());
    for (size_t i = 0; i < got.numbers.size(); ++i) {
      CAPTURE(i, got.numbers[i], want.numbers[i]);
      if (std::isnan(want.numbers[i]))
        CHECK(std::isnan(got.numbers[i]));
      else
        CHECK(got.numbers[i] == Approx(want.numbers[i]).epsilon(1e-5).margin(1e-6));
    }
  }
  CHECK(run_cli("run --example tutorial/f --backend gpu").code == 2);
}

TEST_CASE("lower prints each stage, the MLIR is valid for mlir-opt-19") {
  auto mlir = run_cli("lower --example tutorial/f --emit mlir");
  REQUIRE(mlir.code == 0);
  CHECK(mlir.out.find("linalg.generic") != std::string::npos);
  CHECK(mlir.out.find("call @cjax_runtime_call") == std::string::npos);  // small dots: loops
  auto mlp = run_cli("lower --example block/mlp --emit mlir");
  CHECK(mlp.out.find("call @cjax_runtime_call") != std::string::npos);  // large ones: OpenBLAS
  auto lowered = run_cli("lower --example tutorial/f --emit lowered");
  CHECK(lowered.out.find("llvm.func @main") != std::string::npos);
  auto llvm = run_cli("lower --example tutorial/f --emit llvm");
  CHECK(llvm.out.find("define void @main") != std::string::npos);
  if (std::system("mlir-opt-19 --version > /dev/null 2>&1") == 0) {
    auto checked = run_cli(
        "lower --example block/mlp --emit mlir | mlir-opt-19 > /dev/null && "
        "echo valid");
    CHECK(checked.out == "valid\n");
  }
  CHECK(run_cli("lower --example tutorial/f --emit asm").code == 2);
}

TEST_CASE("bench reports compile, step and memory figures as text and JSON") {
  auto text = run_cli("bench --example tutorial/f -r 3 --warmup 1");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("step") != std::string::npos);
  CHECK(text.out.find("residuals") != std::string::npos);
  auto js = run_cli("bench --example tutorial/loss_checkpoint -r 2 --warmup 0 --json");
  REQUIRE(js.code == 0);
  auto j = nlohmann::json::parse(js.out);
  for (const char* key : {"compile_ms", "fwd_ms", "bwd_ms", "step_ms", "residual_bytes",
                          "recomputed_residuals", "peak_bytes"})
    CHECK(j.contains(key));
  CHECK(j["step_ms"]["min"].get<double>() <= j["step_ms"]["max"].get<double>());
  CHECK(j["peak_bytes"].get<size_t>() >= j["residual_bytes"].get<size_t>());
  auto wrt = run_cli("bench --example tutorial/f --wrt nope -r 1");
  CHECK(wrt.code == 2);
  CHECK(wrt.err.find("no argument named 'nope'") != std::string::npos);
}

TEST_CASE("bench --step times a whole training step that returns updated weights") {
  // Without --step, a program returning three values cannot be differentiated: the error says so.
  auto grad_of_step = run_cli("bench --example block/mlp_sgd_step -r 1");
  CHECK(grad_of_step.code == 2);
  CHECK(grad_of_step.err.find("--step times a program as it is") != std::string::npos);
  auto js = run_cli("bench --example block/mlp_sgd_step --step -r 2 --warmup 1 --json");
  REQUIRE(js.code == 0);
  auto j = nlohmann::json::parse(js.out);
  CHECK(j["run_ms"]["min"].get<double>() > 0);
  CHECK(j["run_ms"]["min"].get<double>() <= j["run_ms"]["max"].get<double>());
  // The outputs: W1 and W2 updated (16 MiB each) and the loss. The inputs (W1, W2 and two
  // 128 KiB arrays) are live too, so the peak holds at least both.
  CHECK(j["output_bytes"].get<size_t>() == (32u << 20) + 4);
  CHECK(j["peak_bytes"].get<size_t>() >= (64u << 20) + (256u << 10) + 4);
  auto text = run_cli("bench --example block/mlp_sgd_step --step -r 1 --warmup 0");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("as one program: 1 runs after 0 warm-up") != std::string::npos);
  CHECK(text.out.find("dot_general via BLAS") != std::string::npos);
  auto wrt = run_cli("bench --example block/mlp_sgd_step --step --wrt W1 -r 1");
  CHECK(wrt.code == 2);
  CHECK(wrt.err.find("--step differentiates nothing") != std::string::npos);
}

TEST_CASE("the checkpointed MLP keeps fewer residual bytes than the plain one") {
  auto plain = nlohmann::json::parse(
      run_cli("bench --example block/mlp --wrt W1,W2 -r 1 --warmup 0 --json").out);
  auto remat = nlohmann::json::parse(
      run_cli("bench --example block/mlp_checkpoint --wrt W1,W2 -r 1 --warmup 0 --json").out);
  CHECK(remat["residual_bytes"].get<size_t>() < plain["residual_bytes"].get<size_t>());
  // The plain step recomputes three of the GELU's residuals. Kept: the arguments W1, W2 (16 MiB
  // each) and x (128 KiB), the dot's output, the tanh and the GELU (2 MiB each), and the loss's
  // 2·(z − t) (128 KiB).
  CHECK(plain["recomputed_residuals"].get<size_t>() == 3);
  CHECK(plain["residual_bytes"].get<size_t>() == (32u << 20) + 3 * (2u << 20) + (256u << 10));
}

TEST_CASE("a second process loads what two concurrent first ones compiled, with the same output") {
  namespace fs = std::filesystem;
  const std::string dir = std::string(CJAX_BINARY_DIR) + "/cli_cache_" + std::to_string(getpid());
  fs::remove_all(dir);
  // The two writers run at once, sharing one empty cache.
  const std::string cmd = "CJAX_CACHE_DIR=" + dir + " " + CJAX_CLI_PATH +
                          " bench --example block/mlp -r 1 --warmup 0 --json --timing";
  const std::string out = dir + "_out";
  REQUIRE(std::system(("bash -c '" + cmd + " >" + out + "1 & p1=$!; " + cmd + " >" + out +
                       "2 & p2=$!; wait $p1 && wait $p2'")
                          .c_str()) == 0);
  REQUIRE(std::system((cmd + " >" + out + "3").c_str()) == 0);
  std::vector<nlohmann::json> runs;
  for (const char* k : {"1", "2", "3"}) {
    std::ifstream in(out + k);
    runs.push_back(nlohmann::json::parse(in));
    std::remove((out + k).c_str());
  }
  // Whichever got there first compiled (the other may have found its entries already).
  CHECK_FALSE((runs[0]["phases_ms"]["forward"]["from_cache"].get<bool>() &&
               runs[1]["phases_ms"]["forward"]["from_cache"].get<bool>()));
  CHECK(runs[2]["phases_ms"]["forward"]["from_cache"].get<bool>());
  CHECK(runs[2]["phases_ms"]["backward"]["from_cache"].get<bool>());
  CHECK(runs[2]["phases_ms"]["forward"]["mlir"].get<double>() == 0);
  CHECK(runs[2]["residual_bytes"] == runs[0]["residual_bytes"]);
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    CHECK(e.path().extension() == ".o");  // no temporary file left behind
    ++entries;
  }
  CHECK(entries == 2);  // the forward and backward executables
  // grad's values from loaded code are those of freshly compiled code: the same machine code on
  // the same inputs, so the same bits (not a comparison across machines).
  const char* saved = std::getenv("CJAX_CACHE_DIR");
  const std::string saved_dir = saved ? saved : "";
  setenv("CJAX_CACHE_DIR", dir.c_str(), 1);
  const auto storing = run_cli("grad --example block/mlp");
  const auto loading = run_cli("grad --example block/mlp");
  setenv("CJAX_CACHE_DIR", "off", 1);
  const auto fresh = run_cli("grad --example block/mlp");
  if (saved)
    setenv("CJAX_CACHE_DIR", saved_dir.c_str(), 1);
  else
    unsetenv("CJAX_CACHE_DIR");
  REQUIRE(fresh.code == 0);
  CHECK(storing.out == fresh.out);
  CHECK(loading.out == fresh.out);
  fs::remove_all(dir);
}

TEST_CASE("CJAX_MAX_PARALLEL_LOOPS takes a count, anything else is a usage error") {
  setenv("CJAX_MAX_PARALLEL_LOOPS", "many", 1);
  const auto r = run_cli("run --example block/mlp");
  unsetenv("CJAX_MAX_PARALLEL_LOOPS");
  CHECK(r.code == 2);
  CHECK(r.err.find("CJAX_MAX_PARALLEL_LOOPS=many: not a count of loops") != std::string::npos);
}

TEST_CASE("integer --inputs are read exactly, and values the dtype cannot hold refused") {
  const std::string path = std::string(CJAX_BINARY_DIR) + "/u32_words.jaxpr";
  std::ofstream(path) << "{ lambda ; a:u32[2] b:i8[]. let\n"
                         "    c:u32[2] = shift_right_logical a 28:u32[]\n"
                         "  in (c, b) }\n";
  auto ok = run_cli("run " + path + " --inputs 4294967295,-128");
  CHECK(ok.code == 0);
  CHECK(ok.out.find("[15, 15]") != std::string::npos);  // 0xFFFFFFFF >> 28
  CHECK(ok.out.find("-128") != std::string::npos);
  for (const auto& [inputs, message] :
       {std::pair{"4294967296,0", "'4294967296' (for a) is not a u32 value (0 to 2^32 - 1)"},
        std::pair{"-1,0", "'-1' (for a) is not a u32 value"},
        std::pair{"7,128", "'128' (for b) is not a i8 value (-2^7 to 2^7 - 1)"},
        std::pair{"2.5,0", "'2.5' (for a) is not a u32 value"}}) {
    auto bad = run_cli("run " + path + " --inputs " + inputs);
    CHECK(bad.code == 2);
    CHECK(bad.err.find(message) != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("run on a program with PRNG keys gives JAX's keys, in both threefry modes") {
  // JAX's jaxpr of random.split(PRNGKey(0)), compiled (split natively in the partitionable
  // scheme, through the interpreter's kernel in the classic one) or interpreted.
  // 0x6b200159 = 1797259609, 0xf71f4ea9 = 4146024105.
  const std::string path = std::string(CJAX_BINARY_DIR) + "/split_raw_key.jaxpr";
  std::ofstream(path) << "{ lambda ; a:u32[2]. let\n"
                         "    b:key<fry>[] = random_wrap[impl=fry] a\n"
                         "    c:key<fry>[2] = random_split[shape=(2,)] b\n"
                         "    d:u32[2,2] = random_unwrap c\n"
                         "  in (d,) }\n";
  for (const char* backend : {"cpu", "interpreter"}) {
    auto r = run_cli("run " + path + " --inputs 0 --backend " + backend);
    CHECK(r.code == 0);
    CHECK(r.out.find("1797259609") != std::string::npos);
  }
  setenv("JAX_THREEFRY_PARTITIONABLE", "0", 1);  // the child reads JAX's variable
  auto classic = run_cli("run " + path + " --inputs 0");
  unsetenv("JAX_THREEFRY_PARTITIONABLE");
  CHECK(classic.code == 0);
  CHECK(classic.out.find("4146024105") != std::string::npos);
  std::remove(path.c_str());
}
