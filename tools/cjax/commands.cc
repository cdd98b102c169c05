#include "tools/cjax/commands.h"

#include <fmt/format.h>

#include "examples/registry.h"
#include "ir/print/printer.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"

namespace cjax::cli {

int list_examples(std::ostream& out) {
  size_t width = 0;
  for (const auto& e : examples::all()) width = std::max(width, e.name.size());
  for (const auto& e : examples::all())
    out << fmt::format("{:<{}}  {}\n", e.name, width, e.description);
  return kOk;
}

int print_jaxpr(const Source& src, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(src), [&] {
    out << to_string(load_jaxpr(src)) << "\n";
    return kOk;
  });
}

}  // namespace cjax::cli
