// Input and output files: `cjax run` and `cjax grad` read .npy inputs and write .npy outputs;
// `cjax jaxpr --json` writes the JSON form, which `cjax jaxpr FILE.json` reads back.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "tests/cli/run_cli.h"

using cjax::DType;
using cjax::ShapedArray;
using cjax::runtime::Buffer;
using cli_test::run_cli;

namespace {

const std::string scale_shift =
    "--plugin " + std::string(CJAX_TEST_PLUGIN_DIR) + "/libcjax_test_plugin.so -f scale_shift";

// A scratch directory under the build tree, removed at the end of the test.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& name)
      : dir(std::filesystem::path(CJAX_BINARY_DIR) / ("cli_io_" + name)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string operator/(const std::string& f) const { return (dir / f).string(); }
};

}  // namespace

TEST_CASE("cjax run evaluates on .npy inputs and writes .npy outputs") {
  Scratch s("run");
  std::vector<float> x = {0.0f, 0.5f, 1.0f};
  cjax::io::save_npy(s / "x.npy", Buffer::from_data<float>(ShapedArray(DType::f32, {3}), x));
  // x * s + 1 with s = 4.
  auto r = run_cli("run " + scale_shift + " --inputs " + s / "x.npy" + ",4 --out " + s / "o");
  REQUIRE(r.code == 0);
  CHECK(r.out == "out: Array([1., 3., 5.], dtype=float32)\nwrote " + s / "o/out.npy" + "\n");
  Buffer out = cjax::io::load_npy(s / "o/out.npy");
  REQUIRE(out.aval().str_short() == "f32[3]");
  CHECK(out.to_doubles() == std::vector<double>{1, 3, 5});
  // An example runs on its own inputs: sin(sin(2.0)).
  auto two = run_cli("run --example tutorial/sin_sin");
  CHECK(two.out == "out: Array(0.78907233, dtype=float32)\n");
}

TEST_CASE("cjax grad reads .npy inputs, mixes them with fill values and saves the gradients") {
  Scratch s("grad");
  cjax::io::save_npy(s / "x.npy", Buffer::full(ShapedArray(DType::f32, {3}), 2.0));
  auto r = run_cli("grad " + scale_shift + " --inputs " + s / "x.npy" + ",3 -o " + s / "g");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("grad s: Array(6., dtype=float32)\n") != std::string::npos);
  CHECK(r.out.find("wrote " + s / "g/grad_s.npy") != std::string::npos);
  CHECK(cjax::io::load_npy(s / "g/grad_x.npy").to_doubles() == std::vector<double>{3, 3, 3});
  CHECK(cjax::io::load_npy(s / "g/value.npy").to_doubles() == std::vector<double>{7, 7, 7});
}

TEST_CASE("input files that do not fit the arguments are user errors") {
  Scratch s("bad");
  cjax::io::save_npy(s / "x64.npy", Buffer::full(ShapedArray(DType::f64, {3}), 1.0));
  auto wrong = run_cli("run " + scale_shift + " --inputs " + s / "x64.npy,1");
  CHECK(wrong.code == 1);
  CHECK(wrong.err.find("argument x is f32[3], but " + s / "x64.npy" +
                       " holds f64[3] (save it with .astype(np.float32))") != std::string::npos);
  std::ofstream(s / "junk.npy") << "not numpy";
  auto junk = run_cli("run " + scale_shift + " --inputs " + s / "junk.npy,1");
  CHECK(junk.code == 1);
  CHECK(junk.err.find("malformed .npy: the file does not start with the .npy magic") !=
        std::string::npos);
  CHECK(run_cli("run --example tutorial/sin_sin --inputs " + s / "none.npy").code == 2);
  CHECK(run_cli("run --example tutorial/sin_sin --inputs abc").code == 2);
  CHECK(run_cli("run --example tutorial/sin_sin --inputs 1,2").code == 2);
}

TEST_CASE("random inputs from --seed are reproducible") {
  auto a = run_cli("run --example tutorial/f --seed 7");
  auto b = run_cli("run --example tutorial/f --seed 7");
  auto c = run_cli("run --example tutorial/f --seed 8");
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
  CHECK(run_cli("grad --example tutorial/f --seed 7").code == 0);
}

TEST_CASE(
    "seeded inputs: integers are indices from 0 up to --int-high, bad seeds are usage errors") {
  // min and max of 200 seeded i32 values.
  const std::string min_max =
      "{ lambda ; a:i32[200]. let\n"
      "    b:i32[] = reduce_min[axes=(0,) out_sharding=None] a\n"
      "    c:i32[] = reduce_max[axes=(0,) out_sharding=None] a\n"
      "  in (b, c) }";
  auto r = run_cli("run - --seed 3 --backend interpreter", min_max);
  REQUIRE(r.code == 0);
  CHECK(r.out == "out_0: Array(0, dtype=int32)\nout_1: Array(9, dtype=int32)\n");
  r = run_cli("run - --seed 3 --int-high 64 --backend interpreter", min_max);
  REQUIRE(r.code == 0);
  CHECK(r.out == "out_0: Array(0, dtype=int32)\nout_1: Array(63, dtype=int32)\n");
  r = run_cli("run - --seed 3 --int-range -5,5 --backend interpreter", min_max);
  REQUIRE(r.code == 0);
  CHECK(r.out == "out_0: Array(-5, dtype=int32)\nout_1: Array(4, dtype=int32)\n");
  for (const char* bad : {"5,5", "3", "a,b", "-2147483649,0", "0,2147483649", "1,0"}) {
    auto r2 = run_cli(std::string("run - --seed 3 --int-range ") + bad, min_max);
    CHECK(r2.code == 2);
    CHECK(r2.err == "cjax: run: --int-range " + std::string(bad) +
                        ": give lo,hi with -2^31 <= lo < hi <= 2^31; seeded integers are drawn "
                        "from [lo, hi)\n");
  }
  auto both_ranges = run_cli("run - --seed 3 --int-range 0,4 --int-high 4", min_max);
  CHECK(both_ranges.code == 2);
  CHECK(both_ranges.err.find("--int-range and --int-high both set the range") != std::string::npos);
  auto negative_unsigned = run_cli("run - --seed 0 --int-range -1,3",
                                   "{ lambda ; a:u8[3]. let b:u8[3] = neg a in (b,) }");
  CHECK(negative_unsigned.code == 2);
  CHECK(negative_unsigned.err.find("argument a is u8[3], which holds no negative values") !=
        std::string::npos);
  auto big = run_cli("run - --seed 0 --int-high 1000",
                     "{ lambda ; a:i8[3]. let b:i8[3] = neg a in (b,) }");
  CHECK(big.code == 2);
  CHECK(big.err ==
        "cjax: <stdin>: --int-high 1000: argument a is i8[3], whose largest value is 127\n");

  const std::string range = ": a seed is an integer from 0 to 18446744073709551615 (2^64-1)\n";
  auto neg = run_cli("run -e tutorial/f --seed -1");
  CHECK(neg.code == 2);
  CHECK(neg.err == "cjax: run: --seed -1" + range);
  auto huge = run_cli("grad -e tutorial/f --seed 99999999999999999999999");
  CHECK(huge.code == 2);
  CHECK(huge.err == "cjax: grad: --seed 99999999999999999999999" + range);
  CHECK(run_cli("run -e tutorial/f --seed 1e3").err == "cjax: run: --seed 1e3" + range);
  CHECK(run_cli("run -e tutorial/f --seed 18446744073709551615").code == 0);
  auto both = run_cli("run -e tutorial/sin_sin --inputs 1 --seed 0");
  CHECK(both.code == 2);
  CHECK(both.err == "cjax: run: --inputs and --seed both choose the inputs: give one of them\n");
  auto no_seed = run_cli("run -e tutorial/sin_sin --int-high 5");
  CHECK(no_seed.code == 2);
  CHECK(no_seed.err == "cjax: run: --int-high sets the range of --seed's integers: give --seed\n");
  for (const char* bad : {"0", "-3", "2147483649", "x"}) {
    auto r2 = run_cli(std::string("run -e tutorial/sin_sin --seed 0 --int-high ") + bad);
    CHECK(r2.code == 2);
    CHECK(r2.err == "cjax: run: --int-high " + std::string(bad) +
                        ": give an integer from 1 to 2147483648 (2^31); seeded integers are drawn "
                        "from [0, N)\n");
  }
}

TEST_CASE("cjax jaxpr --json round-trips through cjax jaxpr FILE.json") {
  Scratch s("json");
  for (const char* example : {"tutorial/f", "tutorial/f3", "tutorial/loss_checkpoint"}) {
    CAPTURE(example);
    auto text = run_cli(std::string("jaxpr --example ") + example);
    auto json = run_cli(std::string("jaxpr --json --example ") + example);
    REQUIRE(json.code == 0);
    CHECK(json.out.rfind("{\n  \"format\": \"cjax-jaxpr\",\n  \"version\": 1,", 0) == 0);
    std::ofstream(s / "p.json") << json.out;
    auto back = run_cli("jaxpr " + s / "p.json");
    REQUIRE(back.code == 0);
    CHECK(back.out == text.out);
    CHECK(run_cli("jaxpr --json " + s / "p.json").out == json.out);
  }
  // Reports work from the JSON file as from the example...
  std::ofstream(s / "f.json") << run_cli("jaxpr --json -e tutorial/f").out;
  CHECK(run_cli("residuals " + s / "f.json").out == run_cli("residuals -e tutorial/f").out);
  // ... except that a remat policy keeps only its name in JSON: applying it is an error.
  std::ofstream(s / "f3.json") << run_cli("jaxpr --json -e tutorial/f3").out;
  auto f3 = run_cli("residuals " + s / "f3.json");
  CHECK(f3.code == 1);
  CHECK(f3.err.find("the remat policy <function dots_with_no_batch_dims_saveable at "
                    "0xXXXXXXXXXXXX> was read from JSON") != std::string::npos);
  auto bad = run_cli("jaxpr -", "{\"format\": \"cjax-jaxpr\", \"version\": 1, \"main\": 0}");
  CHECK(bad.code == 1);
  CHECK(bad.err == "cjax: <stdin>: JSON jaxpr: $: missing \"jaxprs\"\n");
}

TEST_CASE("an --out directory that cannot be made fails before anything is printed") {
  for (const char* cmd : {"run", "grad"}) {
    CAPTURE(cmd);
    auto r = run_cli(std::string(cmd) + " --example tutorial/f --out /proc/cjax-forbidden");
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("cannot create directory '/proc/cjax-forbidden'") != std::string::npos);
  }
}
