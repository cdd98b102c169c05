// The batching rule of dot_general (JAX: lax._dot_batch_rule, _dot_general_batch_dim_nums): two
// batched operands make the batch axis a new leading batch dimension of the product; one makes it
// a free dimension of its side, which lands where that side's free dimensions go in the result.
#include <algorithm>

#include "ir/lax_params.h"
#include "passes/batch_rules/register.h"
#include "passes/batching.h"
#include "passes/primitive_rules.h"

namespace cjax {
namespace {

using namespace batching;

// Dimension numbers >= b move up by one (the batch axis was inserted at b).
std::vector<int64_t> bump(const std::vector<int64_t>& dims, int64_t b) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d >= b ? d + 1 : d);
  return out;
}

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// How many of the free dimensions of one side come before its batch axis.
int64_t free_dims_before(int64_t ndim, const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& contract, int64_t bdim) {
  int64_t n = 0;
  for (int64_t d = 0; d < ndim; ++d)
    if (!contains(batch, d) && !contains(contract, d) && d < bdim) ++n;
  return n;
}

BatchedOutputs dot_general(const BatchRuleArgs& a) {
  const Params& p = a.eqn.params;
  DotDimensionNumbers dn = DotDimensionNumbers::from_param(p.at("dimension_numbers"));
  const int64_t lhs_ndim = a.args[0].aval().rank(), rhs_ndim = a.args[1].aval().rank();
  const BatchDim lbd = a.dims[0], rbd = a.dims[1];
  int64_t result_dim = 0;
  if (lbd && rbd) {
    std::vector<int64_t> lb{*lbd}, rb{*rbd};
    for (int64_t d : bump(dn.lhs_batch, *lbd)) lb.push_back(d);
    for (int64_t d : bump(dn.rhs_batch, *rbd)) rb.push_back(d);
    dn.lhs_batch = lb;
    dn.rhs_batch = rb;
    dn.lhs_contract = bump(dn.lhs_contract, *lbd);
    dn.rhs_contract = bump(dn.rhs_contract, *rbd);
  } else if (lbd) {
    // lhs_ndim is the batched operand's rank, as in JAX.
    result_dim = int64_t(dn.lhs_batch.size()) +
                 free_dims_before(lhs_ndim, dn.lhs_batch, dn.lhs_contract, *lbd);
    dn.lhs_batch = bump(dn.lhs_batch, *lbd);
    dn.lhs_contract = bump(dn.lhs_contract, *lbd);
  } else {
    result_dim = lhs_ndim - int64_t(dn.lhs_contract.size()) +
                 free_dims_before(rhs_ndim, dn.rhs_batch, dn.rhs_contract, *rbd);
    dn.rhs_batch = bump(dn.rhs_batch, *rbd);
    dn.rhs_contract = bump(dn.rhs_contract, *rbd);
  }
  std::vector<Atom> outs = a.b.bind(*a.eqn.prim, {a.args[0], a.args[1]},
                                    with_param(p, "dimension_numbers", dn.to_param()));
  return {outs, {result_dim}};
}

}  // namespace

void register_dot_general_batch_rules() {
  define_pass_rules("dot_general").batch = dot_general;
}

}  // namespace cjax
