#include "tools/cjax/autodiff_commands.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "compiler/array.h"
#include "examples/registry.h"
#include "ir/errors.h"
#include "ir/print/printer.h"
#include "passes/fwd_bwd_table.h"
#include "passes/memory/budget.h"
#include "passes/policies.h"
#include "passes/recompute_residuals.h"
#include "passes/remat.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tools/cjax/backend_commands.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"
#include "tools/cjax/terminal.h"

namespace cjax::cli {
namespace {

std::string human_bytes(size_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

}  // namespace

PreparedProgram prepare_program(const AutodiffOptions& o) {
  PreparedProgram p{load_jaxpr(o.src), o.arg_names};
  if (p.arg_names.empty()) {
    if (p.jaxpr.debug && !p.jaxpr.debug->arg_names.empty())
      p.arg_names = p.jaxpr.debug->arg_names;
    else
      for (const Var& v : p.jaxpr.invars) p.arg_names.push_back(v.hint());
  }
  if (p.arg_names.size() != p.jaxpr.invars.size())
    throw UsageError(fmt::format("--arg-names gives {} names for {} arguments", p.arg_names.size(),
                                 p.jaxpr.invars.size()));
  if (!o.policy.empty() && !o.budget.empty())
    throw UsageError("--policy and --budget both choose what to save: give one");
  if (!o.policy.empty())
    p.jaxpr = checkpoint_jaxpr(p.jaxpr, policies::by_name(o.policy, o.names, o.offload_names));
  if (!o.budget.empty())
    p.jaxpr = checkpoint_jaxpr(p.jaxpr, policies::memory_budget(memory::parse_bytes(o.budget)));
  return p;
}

int print_residuals(const AutodiffOptions& opts, bool bytes, bool json, std::ostream& out,
                    std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts);
    VjpResult r = vjp_jaxpr(p.jaxpr);
    std::vector<SavedResidual> res = saved_residuals(r.fwd, r.num_residuals, p.arg_names);
    size_t total = 0;
    for (const auto& s : res) total += s.aval.nbytes();
    if (json) {
      nlohmann::json doc;
      doc["residuals"] = nlohmann::json::array();
      for (const auto& s : res) {
        doc["residuals"].push_back({{"aval", s.aval.str_short()},
                                    {"dtype", std::string(short_name(s.aval.dtype))},
                                    {"shape", s.aval.shape},
                                    {"bytes", s.aval.nbytes()},
                                    {"description", s.description}});
      }
      doc["count"] = res.size();
      doc["total_bytes"] = total;
      out << doc.dump(2) << "\n";
      return kOk;
    }
    for (const auto& s : res) {
      out << s.aval.str_short() << " " << s.description;
      if (bytes) out << fmt::format("  [{}]", human_bytes(s.aval.nbytes()));
      out << "\n";
    }
    if (bytes)
      out << fmt::format("total: {} residuals, {} ({} bytes)\n", res.size(), human_bytes(total),
                         total);
    return kOk;
  });
}

namespace {

// The vjp pair as compiled code runs it: cheap residuals recomputed (docs/backend.md).
VjpResult as_compiled(const VjpResult& r) {
  ResidualSplit s = recompute_cheap_residuals(r.fwd, r.bwd, r.num_residuals);
  return {std::move(s.fwd), std::move(s.bwd), s.num_residuals};
}

}  // namespace

int print_fwd_bwd(const AutodiffOptions& opts, const std::string& layout, const std::string& only,
                  bool compiled, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts);
    VjpResult r = vjp_jaxpr(p.jaxpr);
    if (compiled) r = as_compiled(r);
    std::string fwd = to_string(r.fwd), bwd = to_string(r.bwd);
    if (only == "fwd")
      out << fwd << "\n";
    else if (only == "bwd")
      out << bwd << "\n";
    else if (layout == "stacked")
      out << fwd_bwd_stacked(fwd, bwd);
    else if (layout == "columns")
      out << fwd_bwd_columns(fwd, bwd);
    else {  // auto: side by side when that fits the terminal
      std::string columns = fwd_bwd_columns(fwd, bwd);
      size_t width = terminal_width();
      out << (width == 0 || text_width(columns) <= width ? columns : fwd_bwd_stacked(fwd, bwd));
    }
    return kOk;
  });
}

int print_grad(const AutodiffOptions& opts, const InputOptions& inputs, const std::string& out_dir,
               const std::string& backend, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts);
    std::vector<runtime::Buffer> args =
        make_inputs(p.jaxpr, p.arg_names, inputs, default_inputs(opts.src));
    VjpResult r = vjp_jaxpr(p.jaxpr);
    const Evaluator evaluator = parse_evaluator(backend);
    if (evaluator == Evaluator::cpu) r = as_compiled(r);  // as grad runs it
    const std::string where = describe(opts.src);
    std::vector<runtime::Buffer> fwd = evaluate(r.fwd, args, evaluator, where + " (forward)");
    size_t n_out = p.jaxpr.outvars.size();
    bool scalar = n_out == 1 && p.jaxpr.outvars[0].aval().shape.empty();
    // A non-scalar output is reduced with an all-ones cotangent: the gradient of sum(outputs).
    std::vector<runtime::Buffer> bwd_in(fwd.begin() + static_cast<std::ptrdiff_t>(n_out),
                                        fwd.end());
    for (const Atom& o : p.jaxpr.outvars) bwd_in.push_back(runtime::Buffer::full(o.aval(), 1.0));
    std::vector<runtime::Buffer> grads = evaluate(r.bwd, bwd_in, evaluator, where + " (backward)");
    for (size_t i = 0; i < n_out; ++i)
      out << (n_out == 1 ? std::string("value") : fmt::format("value[{}]", i)) << ": "
          << Array::from_buffer(fwd[i]).to_string() << "\n";
    if (!scalar) out << "(the output is not a scalar: gradients are of the sum of its elements)\n";
    for (size_t i = 0; i < grads.size(); ++i)
      out << "grad " << p.arg_names[i] << ": " << Array::from_buffer(grads[i]).to_string() << "\n";
    if (!out_dir.empty()) {
      std::vector<std::string> names;
      std::vector<runtime::Buffer> values(fwd.begin(),
                                          fwd.begin() + static_cast<std::ptrdiff_t>(n_out));
      for (size_t i = 0; i < n_out; ++i)
        names.push_back(n_out == 1 ? "value" : fmt::format("value_{}", i));
      for (size_t i = 0; i < grads.size(); ++i) {
        names.push_back("grad_" + p.arg_names[i]);
        values.push_back(grads[i]);
      }
      for (const std::string& path : write_npy_files(out_dir, names, values))
        out << "wrote " << path << "\n";
    }
    return kOk;
  });
}

}  // namespace cjax::cli
