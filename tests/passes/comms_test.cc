// `cjax comms`'s report (passes/comms.h): the collectives of shard_map programs, their groups and
// the bytes one process sends, against the counts worked out by hand.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "cjax/api.h"
#include "ir/parse/parser.h"
#include "passes/comms.h"

namespace cjax {
namespace comms_test {

namespace jnp = cjax::numpy;

Array loss(const Array& w, const Array& xs) {
  return jnp::sum(jnp::square(jnp::tanh(jnp::matmul(xs, w))));
}

TEST_CASE("comms: an FSDP gradient gathers the weights and scatters their gradient") {
  const Mesh mesh({4}, {"x"});
  auto fsdp = shard_map(
      [](const Array& shard, const Array& batch) {
        return grad([&](const Array& s) { return loss(lax::all_gather(s, "x", 0, true), batch); })(
            shard);
      },
      mesh, {P("x"), P("x")}, {P("x")});
  const Jaxpr j = make_jaxpr(fsdp)(ShapeDtype{DType::f32, {8, 3}}, ShapeDtype{DType::f32, {16, 8}});
  const CommsReport r = comms_report(j);
  REQUIRE(r.entries.size() == 3);
  // The forward gathers the [2, 3] blocks: 3 other blocks of 24 bytes.
  CHECK(r.entries[0].what == "all_gather");
  CHECK(r.entries[0].group == 4);
  CHECK(r.entries[0].operand.str_short() == "f32[2,3]");
  CHECK(r.entries[0].bytes_per_call == 72);
  // Its transpose scatters the [8, 3] gradient: 3/4 of 96 bytes.
  CHECK(r.entries[1].what == "reduce_scatter");
  CHECK(r.entries[1].operand.str_short() == "f32[8,3]");
  CHECK(r.entries[1].bytes_per_call == 72);
  // The output's [2, 3] blocks are gathered into the whole gradient.
  CHECK(r.entries[2].what == "shard_map output 0");
  CHECK(r.entries[2].axes == std::vector<std::string>{"x"});
  CHECK(r.entries[2].bytes_per_call == 72);
  CHECK(r.total_bytes() == 216);
  CHECK_THAT(format_comms(r), Catch::Contains("total: 216 B sent by each process per run") &&
                                  Catch::Contains("comms_test.cc"));
  CHECK(r.bytes_by_collective() ==
        std::vector<std::pair<std::string, int64_t>>{
            {"all_gather", 72}, {"reduce_scatter", 72}, {"shard_map outputs", 72}});
  // Run by on_blocks, the gradient's blocks stay where they are: nothing gathered.
  const CommsReport kept = comms_report(j, /*outputs_gathered=*/false);
  CHECK(kept.entries.size() == 2);
  CHECK(kept.total_bytes() == 144);
}

TEST_CASE("comms: groups of a 2-D mesh, loops and replicated outputs") {
  const Mesh mesh({2, 4}, {"x", "y"});
  auto f = shard_map(
      [](const Array& a) {
        auto step = [](const Array& c, const Array&) {
          const Array summed = lax::psum(c, "y");
          const Array swapped = lax::ppermute(c, "x", {{0, 1}, {1, 0}});
          return std::pair{summed + swapped, c};
        };
        return lax::pmax(scan(step, a, jnp::zeros({5})).first, {"x", "y"});
      },
      mesh, {P("x", "y")}, {P()});
  const CommsReport r = comms_report(make_jaxpr(f)(ShapeDtype{DType::f32, {4, 8}}));
  REQUIRE(r.entries.size() == 3);
  // Blocks are f32[2,2] (16 bytes). In the scan's body, five times: psum over y (a group of 4)
  // sends 2 * 3/4 * 16 = 24 bytes, ppermute over x its 16 bytes.
  CHECK(r.entries[0].what == "psum");
  CHECK(r.entries[0].group == 4);
  CHECK(r.entries[0].calls == 5);
  CHECK(r.entries[0].bytes_per_call == 24);
  CHECK(r.entries[1].what == "ppermute");
  CHECK(r.entries[1].group == 2);
  CHECK(r.entries[1].calls == 5);
  CHECK(r.entries[1].bytes_per_call == 16);
  // pmax over both axes: a group of 8, 2 * 7/8 * 16 = 28 bytes. The P() output gathers nothing.
  CHECK(r.entries[2].what == "pmax");
  CHECK(r.entries[2].group == 8);
  CHECK(r.entries[2].bytes_per_call == 28);
  CHECK(r.total_bytes() == 5 * 24 + 5 * 16 + 28);
}

TEST_CASE("comms: a program without collectives, and a parsed one") {
  CHECK(format_comms(comms_report(make_jaxpr([](const Array& a) { return a * 2.0; })(
            ShapeDtype{DType::f32, {3}}))) == "no communication: the program has no collective\n");
  // The program tests/mpi runs with `mpirun -np 4 cjax run`: its file knows no source lines.
  std::ifstream file(std::string(CJAX_SOURCE_DIR) + "/tests/mpi/shard_map_psum.jaxpr");
  REQUIRE(file);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(format_comms(comms_report(*parse_jaxpr(text))) ==
        "collective  axes  group  operand  calls  per call  sent\n"
        "psum        x     4      f32[2]   1      12 B      12 B\n"
        "total: 12 B sent by each process per run\n");
}

}  // namespace comms_test
}  // namespace cjax
