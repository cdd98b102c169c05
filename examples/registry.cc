#include "examples/registry.h"

#include <fmt/format.h>

#include "ir/errors.h"

namespace cjax::examples {

const std::vector<Example>& all() {
  static const std::vector<Example> examples = [] {
    std::vector<Example> out;
    register_tutorial_examples(out);
    register_block_examples(out);
    register_checkpoint_examples(out);
    register_control_flow_examples(out);
    register_vmap_examples(out);
    register_custom_examples(out);
    register_random_examples(out);
    return out;
  }();
  return examples;
}

const Example& get(std::string_view name) {
  for (const Example& e : all())
    if (e.name == name) return e;
  std::vector<std::string> names;
  for (const Example& e : all()) names.push_back(e.name);
  throw UsageError(fmt::format("unknown example '{}'; examples: {}", name, fmt::join(names, ", ")));
}

}  // namespace cjax::examples
