// The programs of JAX's gradient-checkpointing tutorial, in C++ (examples/tutorial.cc), and of
// the computation-block article (examples/block.cc). The registered examples, the docs and the
// tests all use these definitions.
#pragma once

#include <functional>
#include <vector>

#include "cjax/array.h"

namespace cjax::examples {

using Fn = std::function<Array(const Array&)>;

Array g(const Array& W, const Array& x);  // sin(dot(W, x))
Array f(const Array& W1, const Array& W2, const Array& W3, const Array& x);
Array f2(const Array& W1, const Array& W2, const Array& W3,
         const Array& x);  // checkpoint(g) each call
Array f4(const Array& W1, const Array& W2, const Array& W3,
         const Array& x);  // outputs named a, b, c

Array layer(const Array& W, const Array& x);
// predict: layers then a last dot; with `named`, each layer's output is checkpoint_name'd
// `layer{i}_output`.
Array predict(const std::vector<Array>& params, const Array& x, bool named = false);
Array loss(const std::vector<Array>& params, const Array& x, const Array& y);
Array loss_named(const std::vector<Array>& params, const Array& x, const Array& y);

Array chain(const Array& x, int n);  // chain_compose([sin] * n)
Array sin_fn(const Array& x);
Array sin_sin(const Array& x);  // the jax.checkpoint docstring's g
Fn recursive_checkpoint(const std::vector<Fn>& funs);

Array mlp_block(const Array& x, const Array& W1, const Array& W2);  // gelu(x @ W1) @ W2
Array mlp_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets);
Array mlp_checkpoint_loss(const Array& x, const Array& W1, const Array& W2, const Array& targets);

}  // namespace cjax::examples
