// The cjax front end in one include: Array, the numpy-like ops and operators, jax.nn activations,
// lax primitives, pytrees, tracing and make_jaxpr, and the jaxpr printer.
#pragma once

#include "compiler/array.h"
#include "compiler/bind.h"
#include "compiler/eval_jaxpr.h"
#include "compiler/lax.h"
#include "compiler/make_jaxpr.h"
#include "compiler/nn.h"
#include "compiler/numpy.h"
#include "compiler/operators.h"
#include "compiler/promotion.h"
#include "compiler/pytree.h"
#include "compiler/trace.h"
#include "ir/dtype.h"
#include "ir/jaxpr.h"
#include "ir/print/printer.h"
