#include "tools/cjax/autodiff_commands.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cjax/array.h"
#include "cjax/autodiff_core.h"
#include "cjax/memory_check.h"
#include "examples/registry.h"
#include "ir/byte_size.h"
#include "ir/errors.h"
#include "ir/print/printer.h"
#include "passes/dce.h"
#include "passes/fwd_bwd_table.h"
#include "passes/memory/budget_plan.h"
#include "passes/pipeline.h"
#include "passes/policies.h"
#include "passes/remat.h"
#include "passes/saved_residuals.h"
#include "passes/vjp.h"
#include "runtime/interpreter.h"
#include "tools/cjax/backend_commands.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/name_checks.h"
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

size_t parse_bytes(const std::string& text) {
  if (std::optional<size_t> bytes = parse_byte_size(text)) return *bytes;
  throw UsageError(fmt::format(
      "'{}' is not a size: write bytes or a number with B, KiB, MiB, GiB, kB, MB or GB", text));
}

void check_autodiff_options(const AutodiffOptions& o) {
  if (!o.policy.empty() && !o.budget.empty())
    throw UsageError("--policy and --budget both choose what to save: give one");
  if (!o.policy.empty()) policies::by_name(o.policy, o.names, o.offload_names);
  if (!o.budget.empty()) parse_bytes(o.budget);
}

namespace {

// The body of the program's one shard_map eqn, with the names of the program's arguments that
// its operands are (what each process differentiates, on its blocks; the collectives' rules need
// no process to run).
PreparedProgram per_process_body(const Jaxpr& program, const std::vector<std::string>& names) {
  const Eqn* found = nullptr;
  size_t count = 0;
  for (const Eqn& e : program.eqns)
    if (e.prim && e.prim->name == "shard_map") {
      found = &e;
      ++count;
    }
  if (count != 1)
    throw UsageError(
        fmt::format("--per-process reads the body of a program's one shard_map "
                    "equation, but this program has {}",
                    count));
  PreparedProgram p{*found->params.get_jaxpr("jaxpr"), {}};
  for (const Atom& operand : found->inputs) {
    std::string name = operand.is_var() ? operand.var().hint() : "";
    if (operand.is_var())
      for (size_t i = 0; i < program.invars.size(); ++i)
        if (program.invars[i].id() == operand.var().id() && i < names.size()) name = names[i];
    p.arg_names.push_back(name.empty() ? fmt::format("operand{}", p.arg_names.size()) : name);
  }
  return p;
}

}  // namespace

PreparedProgram prepare_program(const AutodiffOptions& o, std::ostream& err) {
  check_autodiff_options(o);
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
  if (o.per_process) p = per_process_body(p.jaxpr, p.arg_names);
  warn_about_names(describe(o.src), p.jaxpr, o.policy, o.names, o.offload_names, err);
  if (!o.policy.empty())
    p.jaxpr = checkpoint_jaxpr(p.jaxpr, policies::by_name(o.policy, o.names, o.offload_names));
  if (!o.budget.empty())
    p.jaxpr = checkpoint_jaxpr(p.jaxpr, policies::memory_budget(parse_bytes(o.budget)));
  return p;
}

int print_residuals(const AutodiffOptions& opts, bool bytes, bool json, std::ostream& out,
                    std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts, err);
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

int print_fwd_bwd(const AutodiffOptions& opts, const std::string& layout, const std::string& only,
                  bool compiled, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts, err);
    // With --compiled, the pair as compiled code runs it: cheap residuals recomputed
    // (docs/backend.md); without it, JAX's programs.
    StepOptions step;
    step.recompute_cheap_residuals = compiled;
    step.sum_cotangents_in_order = compiled;
    const TrainingStep r = training_step(p.jaxpr, step);
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

namespace {

// Which arguments `cjax grad` differentiates (see GradOptions), after JAX's dtype checks; `note`
// gets the line that says which integer arguments were left out, if any.
std::vector<bool> grad_arguments(const PreparedProgram& p, const GradOptions& g,
                                 std::string& note) {
  const size_t n = p.jaxpr.invars.size();
  auto dtype = [&](size_t i) { return p.jaxpr.invars[i].aval().dtype; };
  auto check = [&](size_t i) {
    try {
      check_grad_input_dtype("grad", dtype(i), g.allow_int);
    } catch (const TypeError& e) {
      throw TypeError(
          fmt::format("argument {}: {} (cjax grad --allow-int)", p.arg_names[i], e.what()));
    }
  };
  std::vector<bool> wrt(n, false);
  for (const std::string& name : g.wrt) {
    auto it = std::find(p.arg_names.begin(), p.arg_names.end(), name);
    if (it == p.arg_names.end())
      throw UsageError(fmt::format("--wrt: no argument named '{}' (the arguments are {})", name,
                                   fmt::join(p.arg_names, ", ")));
    size_t i = static_cast<size_t>(it - p.arg_names.begin());
    check(i);
    wrt[i] = true;
  }
  if (!g.wrt.empty()) return wrt;
  std::vector<std::string> left_out;
  for (size_t i = 0; i < n; ++i) {
    wrt[i] = g.allow_int || is_floating(dtype(i));
    if (!wrt[i]) left_out.push_back(p.arg_names[i]);
  }
  if (std::find(wrt.begin(), wrt.end(), true) == wrt.end()) {
    if (n == 0) throw TypeError("grad: the program has no arguments to differentiate");
    check(0);  // no floating-point argument: JAX's TypeError for the first
  }
  if (!left_out.empty())
    note = fmt::format(
        "(gradients with respect to the floating-point arguments; not differentiated: {} "
        "(integers); --wrt and --allow-int choose)\n",
        fmt::join(left_out, ", "));
  return wrt;
}

}  // namespace

int print_grad(const AutodiffOptions& opts, const GradOptions& grad, const InputOptions& inputs,
               const std::string& out_dir, const std::string& backend, std::ostream& out,
               std::ostream& err) {
  return guarded(err, describe(opts.src), [&] {
    PreparedProgram p = prepare_program(opts, err);
    // JAX's checks first: grad of sum(outputs) needs floating-point outputs.
    for (const Atom& o : p.jaxpr.outvars) check_grad_output_dtype("grad", o.aval().dtype);
    std::string note;
    const std::vector<bool> wrt = grad_arguments(p, grad, note);
    const Evaluator evaluator = parse_evaluator(backend);
    // The gradients nobody asked for are never computed; compiled, the step is as grad runs it.
    StepOptions step;
    step.wrt = wrt;
    step.recompute_cheap_residuals = evaluator != Evaluator::interpreter;
    const TrainingStep r = training_step(p.jaxpr, step);
    // Before the inputs, which may not fit either.
    check_memory_need(step_memory_need(r.fwd, r.bwd, r.num_residuals));
    std::vector<runtime::Buffer> args =
        make_inputs(p.jaxpr, p.arg_names, inputs, default_inputs(opts.src));
    const std::string where = describe(opts.src);
    std::vector<runtime::Buffer> fwd = evaluate(r.fwd, args, evaluator, where + " (forward)");
    size_t n_out = p.jaxpr.outvars.size();
    bool scalar = n_out == 1 && p.jaxpr.outvars[0].aval().shape.empty();
    // A non-scalar output is reduced with an all-ones cotangent: the gradient of sum(outputs).
    std::vector<runtime::Buffer> bwd_in(fwd.begin() + static_cast<std::ptrdiff_t>(n_out),
                                        fwd.end());
    for (const Atom& o : p.jaxpr.outvars) bwd_in.push_back(runtime::Buffer::full(o.aval(), 1.0));
    std::vector<runtime::Buffer> grads = evaluate(r.bwd, bwd_in, evaluator, where + " (backward)");
    std::vector<std::string> grad_names;  // the differentiated arguments, in order
    for (size_t i = 0; i < wrt.size(); ++i)
      if (wrt[i]) grad_names.push_back(p.arg_names[i]);
    // The files first: should writing them fail, nothing has been printed.
    std::vector<std::string> written;
    if (!out_dir.empty()) {
      std::vector<std::string> names;
      std::vector<runtime::Buffer> values(fwd.begin(),
                                          fwd.begin() + static_cast<std::ptrdiff_t>(n_out));
      for (size_t i = 0; i < n_out; ++i)
        names.push_back(n_out == 1 ? "value" : fmt::format("value_{}", i));
      for (size_t i = 0; i < grads.size(); ++i) {
        names.push_back("grad_" + grad_names[i]);
        values.push_back(grads[i]);
      }
      written = write_npy_files(out_dir, names, values);
    }
    for (size_t i = 0; i < n_out; ++i)
      out << (n_out == 1 ? std::string("value") : fmt::format("value[{}]", i)) << ": "
          << Array::from_buffer(fwd[i]).to_string() << "\n";
    if (!scalar) out << "(the output is not a scalar: gradients are of the sum of its elements)\n";
    out << note;
    for (size_t i = 0; i < grads.size(); ++i)
      out << "grad " << grad_names[i] << ": " << Array::from_buffer(grads[i]).to_string() << "\n";
    for (const std::string& path : written) out << "wrote " << path << "\n";
    return kOk;
  });
}

}  // namespace cjax::cli
