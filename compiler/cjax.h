// The cjax front end in one include: Array, the numpy-like ops and operators, jax.nn activations,
// lax primitives, pytrees, tracing and make_jaxpr, the jaxpr printer, and the transformations
// (jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian, checkpoint) with the
// residual reports, and the checkpoint policies (cjax::policies, JAX's jax.checkpoint_policies,
// memory_budget included).
#pragma once

#include "compiler/array.h"
#include "compiler/autodiff_api.h"
#include "compiler/autodiff_jacobian.h"
#include "compiler/backend.h"
#include "compiler/bind.h"
#include "compiler/checkpoint.h"
#include "compiler/control_flow.h"
#include "compiler/eval_jaxpr.h"
#include "compiler/jit.h"
#include "compiler/lax.h"
#include "compiler/make_jaxpr.h"
#include "compiler/nn.h"
#include "compiler/numpy.h"
#include "compiler/operators.h"
#include "compiler/promotion.h"
#include "compiler/pytree.h"
#include "compiler/residual_report.h"
#include "compiler/trace.h"
#include "ir/dtype.h"
#include "ir/jaxpr.h"
#include "ir/print/printer.h"
#include "passes/memory/budget.h"  // policies::memory_budget (docs/auto-remat.md)
#include "passes/policies.h"       // policies::..., JAX's jax.checkpoint_policies
