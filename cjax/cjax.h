// cjax in one include, for programs and plugins that use an installed cjax:
//
//   #include <cjax/cjax.h>
//
// The front end (Array, numpy/nn/lax ops, make_jaxpr, grad/vjp/jvp, checkpoint, the residual
// reports), .npy files, the JSON form of jaxprs, and CLI plugin registration
// (CJAX_REGISTER_FUNCTION), and the MLIR CPU back end, which this include installs: grad, vjp,
// jit, ... on concrete arrays run compiled code (compiler/cpu/cpu_backend.h). No MLIR or LLVM
// header is reachable from here.
#pragma once

#include "cjax/api.h"
#include "cjax/version.h"
#include "compiler/cpu/cpu_backend.h"
#include "io/npy.h"
#include "ir/json/json.h"
#include "plugin/plugin.h"
