// The cjax front end in one include: Array, the numpy-like ops and operators, jax.nn activations,
// lax primitives, pytrees, tracing and make_jaxpr, the jaxpr printer, and the transformations
// (jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian, checkpoint) with the
// residual reports, and the checkpoint policies (cjax::policies, JAX's jax.checkpoint_policies,
// memory_budget included).
#pragma once

#include "cjax/array.h"
#include "cjax/autodiff_api.h"
#include "cjax/autodiff_jacobian.h"
#include "cjax/backend.h"
#include "cjax/bind.h"
#include "cjax/checkpoint.h"
#include "cjax/collectives.h"
#include "cjax/control_flow.h"
#include "cjax/custom_derivatives.h"
#include "cjax/eval_jaxpr.h"
#include "cjax/index_update.h"
#include "cjax/jit.h"
#include "cjax/lax.h"
#include "cjax/make_jaxpr.h"
#include "cjax/nn.h"
#include "cjax/nn_initializers.h"
#include "cjax/numpy.h"
#include "cjax/operators.h"
#include "cjax/optim.h"
#include "cjax/promotion.h"
#include "cjax/pytree.h"
#include "cjax/random.h"
#include "cjax/residual_report.h"
#include "cjax/shard_map.h"
#include "cjax/trace.h"
#include "cjax/vmap.h"
#include "ir/dtype.h"
#include "ir/jaxpr.h"
#include "ir/print/printer.h"
#include "passes/memory/budget_plan.h"  // policies::memory_budget (docs/auto-remat.md)
#include "passes/policies.h"            // policies::..., JAX's jax.checkpoint_policies
