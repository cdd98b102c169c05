#include "cjax/residual_report.h"

#include "ir/print/printer.h"
#include "passes/fwd_bwd_table.h"
#include "passes/vjp.h"

namespace cjax::detail {

FwdBwdPrograms fwd_bwd_programs(const TracedFunction& traced) {
  VjpResult r = vjp_jaxpr(traced.closed.jaxpr);
  FwdBwdPrograms p;
  p.fwd = std::move(r.fwd);
  p.bwd = std::move(r.bwd);
  p.num_residuals = r.num_residuals;
  p.arg_names = traced.arg_names;
  return p;
}

std::vector<SavedResidual> saved_residuals_of(const FwdBwdPrograms& p) {
  return saved_residuals(p.fwd, p.num_residuals, p.arg_names);
}

std::string render_fwd_bwd(const FwdBwdPrograms& p, bool columns) {
  std::string fwd = to_string(p.fwd), bwd = to_string(p.bwd);
  return columns ? fwd_bwd_columns(fwd, bwd) : fwd_bwd_stacked(fwd, bwd);
}

}  // namespace cjax::detail
