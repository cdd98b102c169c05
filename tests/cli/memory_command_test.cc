// `cjax memory` and `--budget`: the table, the budget's save set, and an impossible budget (the
// error catalogue's "impossible memory budget" class, docs/errors.md).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "ir/errors.h"
#include "passes/memory/budget_plan.h"
#include "tests/cli/run_cli.h"

using cli_test::run_cli;

namespace {

// The SVG driver writes text as character references (`&#x30;`): decode them.
std::string decode_entities(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "&#x") == 0) {
      const size_t end = s.find(';', i);
      if (end != std::string::npos) {
        out += static_cast<char>(std::stoi(s.substr(i + 3, end - i - 3), nullptr, 16));
        i = end;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

TEST_CASE("cjax memory tabulates every policy and three budgets") {
  auto r = run_cli("memory --example tutorial/loss --json");
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 8);  // no checkpoint, four policies, three budgets
  CHECK(rows[0]["policy"] == "(no checkpoint)");
  CHECK(rows[0]["peak_bytes"] == 552);
  CHECK(rows[0]["recompute_flops"] == 0);
  CHECK(rows[2]["policy"] == "nothing_saveable");
  CHECK(rows[2]["residual_bytes"] == 0);
  // The budget rows: the smallest peak, the middle of the curve and the cheapest end; at the
  // same peak as dots_saveable (520 B) the budget recomputes less.
  CHECK(rows[5]["peak_bytes"] == 472);
  CHECK(rows[6]["peak_bytes"] == 520);
  CHECK(rows[6]["recompute_flops"] == 16);
  CHECK(rows[3]["peak_bytes"] == 520);
  CHECK(rows[3]["recompute_flops"] == 24);
  CHECK(rows[7]["recompute_flops"] == 0);
  CHECK(run_cli("memory -e tutorial/loss --budgets 500B").out.find("memory_budget(500 B)") !=
        std::string::npos);
  CHECK(run_cli("memory -e tutorial/loss --policy nothing_saveable").code == 2);  // not an option
}

TEST_CASE("cjax memory starts a chain's budgets at its nested schedules' smallest peak") {
  auto r = run_cli("memory --example tutorial/chain16 --json");
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 8);
  CHECK(rows[2]["policy"] == "nothing_saveable");
  CHECK(rows[2]["peak_bytes"] == 80);  // the lowest any per-value save set reaches
  CHECK(rows[5]["peak_bytes"] == 40);  // nested as checkpoints (Griewank's schedule)
  CHECK(rows[5]["recompute_flops"] == 49);
  CHECK(rows[7]["peak_bytes"] == 84);
  CHECK(rows[7]["recompute_flops"] == 0);
}

TEST_CASE("cjax memory --plot draws the live bytes and the trade-off as SVG") {
  const std::string path = std::string(CJAX_BINARY_DIR) + "/memory_plot_test.svg";
  std::remove(path.c_str());
  auto r = run_cli("memory --example tutorial/loss --plot " + path);
  REQUIRE(r.code == 0);
  const std::string svg = decode_entities(cli_test::slurp(path));
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  // The title, the boundary's label, a legend entry per row and both panels' axis labels.
  for (const char* text : {"example tutorial/loss: bytes live", "backward starts",
                           "nothing_saveable", "memory_budget(520 B)",
                           "peak memory vs recomputation", "recomputed in the backward program"})
    CHECK(svg.find(text) != std::string::npos);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1))
    ++lines;
  CHECK(lines > 8);  // one per row at least, besides the axes
  auto bad = run_cli("memory --example tutorial/loss --plot /no/such/dir/x.svg");
  CHECK(bad.code == 2);
  CHECK(bad.err == "cjax: example tutorial/loss: --plot: cannot write '/no/such/dir/x.svg'\n");
}

TEST_CASE("cjax residuals --budget picks the save set that fits") {
  auto r = run_cli("residuals --example tutorial/f --budget 870B");
  REQUIRE(r.code == 0);
  CHECK(r.out ==
        "f32[5,4] from the argument W1\n"
        "f32[6,5] from the argument W2\n"
        "f32[7,6] from the argument W3\n"
        "f32[4] from the argument x\n"
        "f32[6] output of dot_general from examples/tutorial.cc:17:20 (g)\n");
  CHECK(run_cli("residuals -e tutorial/f --budget 870B --policy dots_saveable").code == 2);
  CHECK(run_cli("residuals -e tutorial/f --budget lots").code == 2);
}

TEST_CASE("errors: an impossible memory budget states the smallest feasible peak") {
  const std::string message =
      "memory_budget: no save set fits a peak of 800 B (800 bytes); the smallest feasible peak "
      "is 844 B (844 bytes)";
  auto r = run_cli("residuals --example tutorial/f --budget 800B");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "cjax: example tutorial/f: " + message + "\n");
  CHECK(run_cli("fwd-bwd --example tutorial/f --budget 800").code == 1);
}

TEST_CASE("cjax memory prints every budget, marking the ones no save set fits") {
  // 100 B is below the smallest feasible peak (472 B): its row says so, and the feasible budgets
  // before and after it still print.
  auto r = run_cli("memory -e tutorial/loss --budgets 500B,100B,520B");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("memory_budget(500 B)") != std::string::npos);
  const size_t row = r.out.find("memory_budget(100 B)");
  REQUIRE(row != std::string::npos);
  const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
  CHECK(line.find("infeasible: the smallest peak found is 472 B") != std::string::npos);
  CHECK(r.out.find("memory_budget(520 B)") != std::string::npos);
  const auto rows =
      nlohmann::json::parse(run_cli("memory -e tutorial/loss --budgets 500B,100B --json").out);
  REQUIRE(rows.size() == 7);
  CHECK(rows[5]["peak_bytes"].get<size_t>() <= 500);
  CHECK(rows[6]["policy"] == "memory_budget(100 B)");
  CHECK(rows[6]["feasible"] == false);
  CHECK(rows[6]["smallest_peak_bytes"] == 472);
}

TEST_CASE("cjax memory labels budgets that print alike with their exact bytes") {
  // 2000 and 2010 bytes both print as 2.0 KiB: the rows (and the plot's legend) must differ.
  auto r = run_cli("memory -e tutorial/loss --budgets 2000,2010,4KiB");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("memory_budget(2000 B)") != std::string::npos);
  CHECK(r.out.find("memory_budget(2010 B)") != std::string::npos);
  CHECK(r.out.find("memory_budget(4.0 KiB)") != std::string::npos);
}

TEST_CASE("cjax memory adds a row per checkpoint schedule of a program's scan") {
  auto r = run_cli("memory --example loop/euler --json");
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  auto find = [&](const std::string& policy) {
    for (const auto& row : rows)
      if (row["policy"] == policy) return row;
    FAIL("no row " << policy);
    return nlohmann::json();
  };
  const size_t carry = 64 * 256 * 4;
  const auto plain = find("(no checkpoint)"), every = find("scan every_step");
  const auto nested = find("scan nested(2)"), binomial = find("scan binomial(4)");
  // 100 steps: every_step keeps each step's carry, nested(2) the first of each of its 10 chunks,
  // binomial(4) its 4 snapshots (and the last step's residuals); each recomputes more.
  CHECK(size_t(every["residual_bytes"]) >= 100 * carry);
  CHECK(size_t(nested["residual_bytes"]) < 15 * carry);
  CHECK(size_t(binomial["residual_bytes"]) < size_t(nested["residual_bytes"]));
  CHECK(size_t(nested["peak_bytes"]) < size_t(every["peak_bytes"]));
  CHECK(double(plain["recompute_flops"]) == 0);
  CHECK(double(every["recompute_flops"]) < double(nested["recompute_flops"]));
  CHECK(double(nested["recompute_flops"]) < double(binomial["recompute_flops"]));
  // A program without a scan gets no such rows.
  auto mlp = run_cli("memory --example tutorial/f --json");
  REQUIRE(mlp.code == 0);
  for (const auto& row : nlohmann::json::parse(mlp.out))
    CHECK(std::string(row["policy"]).rfind("scan ", 0) == std::string::npos);
}
