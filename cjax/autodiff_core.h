// The non-template core of the autodiff API (autodiff_api.h, autodiff_jacobian.h): functions
// already traced to a jaxpr over their flat Array leaves are transformed by the passes
// (passes/jvp.h, passes/vjp.h) and the results are replayed with eval_jaxpr on the arguments.
// Replaying through bind is what makes transformations compose: on concrete Arrays it evaluates;
// while a trace is active (make_jaxpr, or an enclosing grad) it emits the transformed program's
// eqns into that trace.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cjax/array.h"
#include "cjax/trace.h"
#include "ir/jaxpr.h"

namespace cjax {

// Compile-time argument numbers: `grad(f, argnums<0, 2>)` differentiates positional arguments 0
// and 2 and returns a std::tuple of their gradients; `argnums<1>` returns the one gradient.
template <int... I>
struct Argnums {};
template <int... I>
inline constexpr Argnums<I...> argnums{};

// `value_and_grad(f, argnums<0>, has_aux)`: f returns (value, aux); aux is not differentiated.
struct HasAux {};
inline constexpr HasAux has_aux{};

// `grad(f, argnums<1>, allow_int)`: JAX's allow_int=True. Integer and bool arguments may be
// differentiated; their gradients are zeros of the argument's own dtype and shape (JAX's are
// float0 zeros; cjax has no float0 dtype). Without it, grad of such an argument is a TypeError.
struct AllowInt {};
inline constexpr AllowInt allow_int{};

// JAX's dtype checks of grad and value_and_grad, which throw cjax::TypeError with JAX's messages
// (`api` names the caller): the differentiated output must be floating point, and so must a
// differentiated input unless `allow_int`.
void check_grad_output_dtype(std::string_view api, DType output);
void check_grad_input_dtype(std::string_view api, DType input, bool allow_int);

namespace detail {

// `x` as a value of type `aval`, for tangents and cotangents a user hands in: the dtype and shape
// must match (a C++ number of another float dtype is converted, as JAX converts Python scalars).
// Throws cjax::TypeError("<api>: <what> <index> has type f32[3], expected f32[4]").
Array coerce_to_aval(const Array& x, const ShapedArray& aval, std::string_view api,
                     std::string_view what, size_t index);

// Zeros of `aval` (a concrete Array; a Literal or constvar when staged).
Array zeros_of(const ShapedArray& aval);

// jax.jvp on a traced function: `primals` are the values of its invars, `tangents` one per invar
// (ignored for inputs without a tangent space: integers, bools). Every output gets a tangent
// (zeros where it does not depend on the inputs).
struct JvpValues {
  std::vector<Array> outs, tangent_outs;
};
JvpValues jvp_flat(const ClosedTrace& f, std::span<const Array> primals,
                   std::span<const Array> tangents);

// jax.linearize: the forward program runs now (on the primals); the linear program runs on each
// call of apply, from the residuals it holds.
class LinearizedFlat {
 public:
  LinearizedFlat(const ClosedTrace& f, std::span<const Array> primals);
  const std::vector<Array>& outs() const { return outs_; }
  // One tangent per invar of f -> one tangent per output.
  std::vector<Array> apply(std::span<const Array> tangents) const;

 private:
  std::shared_ptr<const Jaxpr> lin_;
  std::vector<Array> outs_, residuals_;
  std::vector<ShapedArray> in_avals_, out_avals_;
  std::vector<bool> in_differentiable_, out_nonzero_;
};

// jax.vjp: the forward program runs now; apply runs the backward program on the residuals.
// `out_differentiated[i]` false marks an output that gets no cotangent (has_aux's aux leaves);
// empty means all.
class VjpFlat {
 public:
  VjpFlat(const ClosedTrace& f, std::span<const Array> primals,
          const std::vector<bool>& out_differentiated = {});
  const std::vector<Array>& outs() const { return outs_; }
  const std::vector<Array>& residuals() const { return residuals_; }
  // One cotangent per differentiated output -> one cotangent per invar of f (zeros for
  // integer and bool inputs).
  std::vector<Array> apply(std::span<const Array> cotangents) const;
  const std::vector<ShapedArray>& ct_avals() const { return ct_avals_; }

 private:
  std::shared_ptr<const Jaxpr> bwd_;
  std::vector<Array> outs_, residuals_;
  std::vector<ShapedArray> ct_avals_;
};

class JitCache;

// value_and_grad's values: f's outputs, and the cotangents of its invars for a cotangent of 1 on
// output 0 (`out_differentiated[i]` false: output i, has_aux's aux, gets none). On concrete
// arrays with a `cache`, the forward and backward computation is one program, differentiated
// once per distinct trace of f (its exact text: ir/exact_text.h) and run from the cache with no
// pass; the values f captured are that program's inputs, read afresh on every call as JAX's grad
// reads them. Under a trace, without a cache, or for a trace text cannot key (a nested jaxpr's
// consts), it is vjp's forward and backward replay.
struct GradValues {
  std::vector<Array> outs, cotangents;
};
GradValues value_and_grad_flat(const ClosedTrace& f, std::span<const Array> primals,
                               const std::vector<bool>& out_differentiated, JitCache* cache);

// grad's checks on the (single) differentiated output; `api` names the caller in messages.
void check_grad_output(std::string_view api, size_t num_leaves, const ShapedArray* aval);

}  // namespace detail
}  // namespace cjax
