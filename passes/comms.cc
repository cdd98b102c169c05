#include "passes/comms.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/byte_size.h"
#include "ir/sharding.h"
#include "passes/lax/collectives.h"

namespace cjax {
namespace {

// The bytes one process sends per call (the table in comms.h).
int64_t bytes_sent(std::string_view prim, int64_t operand_bytes, int64_t n) {
  if (prim == "psum" || prim == "pmax" || prim == "pmin") return 2 * (n - 1) * operand_bytes / n;
  if (prim == "all_gather") return (n - 1) * operand_bytes;
  if (prim == "reduce_scatter" || prim == "all_to_all") return (n - 1) * operand_bytes / n;
  return operand_bytes;  // ppermute
}

std::vector<std::string> named_axes(const Eqn& e) {
  const std::string& p = e.prim->name;
  if (p == "psum" || p == "pmax" || p == "pmin") return lax_ops::axis_names_of(e.params.at("axes"));
  if (p == "all_gather" || p == "reduce_scatter" || p == "ppermute" || p == "all_to_all")
    return lax_ops::axis_names_of(e.params.at("axis_name"));
  return {};
}

class Walker {
 public:
  Walker(CommsReport& report, bool outputs_gathered)
      : report_(report), outputs_gathered_(outputs_gathered) {}

  void jaxpr(const Jaxpr& j) {
    for (const Eqn& e : j.eqns) eqn(e);
  }

 private:
  void eqn(const Eqn& e) {
    if (!e.prim) return;
    const std::string& p = e.prim->name;
    if (p == "shard_map") return shard_map(e);
    if (mesh_ && !named_axes(e).empty()) return collective(e);
    if (p == "scan" && e.params.has("length")) {
      const int64_t saved = calls_;
      calls_ *= std::max<int64_t>(e.params.get_int("length"), 0);
      nested(e.params.at("jaxpr"));
      calls_ = saved;
      return;
    }
    if (p == "cond" && e.params.has("branches")) return largest_branch(e.params.at("branches"));
    for (const auto& [key, value] : e.params) nested(value);
  }

  void nested(const ParamValue& v) {
    if (v.is<JaxprRef>() && v.as<JaxprRef>()) jaxpr(*v.as<JaxprRef>());
    const std::vector<ParamValue>* items = nullptr;
    if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
    if (v.is<ParamList>()) items = &v.as<ParamList>().items;
    if (items)
      for (const ParamValue& item : *items) nested(item);
  }

  // The branch that sends the most, as if it ran.
  void largest_branch(const ParamValue& branches) {
    if (!branches.is<ParamTuple>()) return nested(branches);
    CommsReport best;
    for (const ParamValue& b : branches.as<ParamTuple>().items) {
      CommsReport one;
      Walker w(one, outputs_gathered_);
      w.mesh_ = mesh_;
      w.calls_ = calls_;
      w.nested(b);
      if (best.entries.empty() || one.total_bytes() > best.total_bytes()) best = std::move(one);
    }
    for (CommsEntry& entry : best.entries) report_.entries.push_back(std::move(entry));
  }

  int64_t group_of(const std::vector<std::string>& axes) const {
    int64_t n = 1;
    for (const std::string& a : axes)
      if (std::optional<size_t> i = mesh_->find(a)) n *= mesh_->sizes[*i];
    return n;
  }

  void collective(const Eqn& e) {
    const std::vector<std::string> axes = named_axes(e);
    const int64_t n = group_of(axes);
    if (n <= 1) return;
    for (const Atom& in : e.inputs) {
      const ShapedArray& aval = in.aval();
      report_.entries.push_back({e.prim->name, axes, n, aval, calls_,
                                 bytes_sent(e.prim->name, int64_t(aval.nbytes()), n),
                                 e.source.summarize()});
    }
  }

  // Its body's collectives, then the gathering of each output over its spec's axes.
  void shard_map(const Eqn& e) {
    const MeshAxes mesh = mesh_from_param(e.params.at("mesh"));
    const std::vector<PartitionSpec> out_specs =
        specs_from_param(e.params.at("out_specs"), "out_specs");
    const Jaxpr& body = *e.params.get_jaxpr("jaxpr");
    const MeshAxes* saved = mesh_;
    mesh_ = &mesh;
    jaxpr(body);
    for (size_t i = 0; outputs_gathered_ && i < out_specs.size() && i < body.outvars.size(); ++i) {
      const std::vector<std::string> axes = out_specs[i].axes();
      const int64_t n = group_of(axes);
      if (n <= 1) continue;
      const ShapedArray& block = body.outvars[i].aval();
      report_.entries.push_back({fmt::format("shard_map output {}", i), axes, n, block, calls_,
                                 bytes_sent("all_gather", int64_t(block.nbytes()), n),
                                 e.source.summarize()});
    }
    mesh_ = saved;
  }

  CommsReport& report_;
  bool outputs_gathered_;
  const MeshAxes* mesh_ = nullptr;
  int64_t calls_ = 1;
};

}  // namespace

int64_t CommsReport::total_bytes() const {
  int64_t total = 0;
  for (const CommsEntry& e : entries) total += e.calls * e.bytes_per_call;
  return total;
}

std::vector<std::pair<std::string, int64_t>> CommsReport::bytes_by_collective() const {
  std::vector<std::pair<std::string, int64_t>> kinds;
  for (const CommsEntry& e : entries) {
    const std::string kind =
        e.what.starts_with("shard_map output") ? std::string("shard_map outputs") : e.what;
    auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == kind; });
    if (it == kinds.end()) it = kinds.insert(kinds.end(), {kind, 0});
    it->second += e.calls * e.bytes_per_call;
  }
  return kinds;
}

CommsReport comms_report(const Jaxpr& jaxpr, bool outputs_gathered) {
  CommsReport report;
  Walker(report, outputs_gathered).jaxpr(jaxpr);
  return report;
}

std::string format_comms(const CommsReport& report) {
  if (report.entries.empty()) return "no communication: the program has no collective\n";
  // A parsed program knows no source lines: the column is left out.
  const bool where = std::any_of(report.entries.begin(), report.entries.end(),
                                 [](const CommsEntry& e) { return e.source != "unknown"; });
  std::vector<std::vector<std::string>> rows = {
      {"collective", "axes", "group", "operand", "calls", "per call", "sent"}};
  if (where) rows[0].push_back("where");
  for (const CommsEntry& e : report.entries) {
    rows.push_back({e.what, fmt::format("{}", fmt::join(e.axes, ",")), std::to_string(e.group),
                    e.operand.str_short(), std::to_string(e.calls),
                    format_byte_size(size_t(e.bytes_per_call)),
                    format_byte_size(size_t(e.calls * e.bytes_per_call))});
    if (where) rows.back().push_back(e.source);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], width[c]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out + fmt::format("total: {} sent by each process per run\n",
                           format_byte_size(size_t(report.total_bytes())));
}

}  // namespace cjax
