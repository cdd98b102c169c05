// The built-in examples: C++ programs from the gradient-checkpointing tutorial and the JAX docs,
// registered by name so the CLI (and the docs generator) can trace and transform them.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/jaxpr.h"
#include "runtime/buffer.h"

namespace cjax::examples {

struct Example {
  std::string name;         // "tutorial/f"
  std::string description;  // one line for `cjax examples`
  // Traces the program on its argument specs; the jaxpr's DebugInfo names the flattened
  // arguments (`W1`, `params[0]`, ...).
  std::function<Jaxpr()> make_jaxpr;
  // The inputs the tutorial evaluates it on (one buffer per flattened argument).
  std::function<std::vector<runtime::Buffer>()> default_inputs;
};

const std::vector<Example>& all();
// Throws cjax::UsageError naming the valid examples when `name` is unknown.
const Example& get(std::string_view name);

// Each source file of examples/ registers its programs here.
void register_tutorial_examples(std::vector<Example>& out);
void register_block_examples(std::vector<Example>& out);
void register_checkpoint_examples(std::vector<Example>& out);
void register_control_flow_examples(std::vector<Example>& out);
void register_vmap_examples(std::vector<Example>& out);
void register_custom_examples(std::vector<Example>& out);
void register_random_examples(std::vector<Example>& out);

}  // namespace cjax::examples
