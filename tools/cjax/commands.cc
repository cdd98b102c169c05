#include "tools/cjax/commands.h"

#include <fmt/format.h>

#include "cjax/version.h"
#include "examples/registry.h"
#include "ir/json/json.h"
#include "ir/print/printer.h"
#include "passes/comms.h"
#include "plugin/loader.h"
#include "tools/cjax/exit_codes.h"
#include "tools/cjax/source.h"
#include "tools/cjax/terminal.h"

namespace cjax::cli {

int list_examples(const std::string& plugin_path, std::ostream& out, std::ostream& err) {
  if (plugin_path.empty()) {
    size_t width = 0;
    for (const auto& e : examples::all()) width = std::max(width, e.name.size());
    for (const auto& e : examples::all())
      out << fmt::format("{:<{}}  {}\n", e.name, width, e.description);
    return kOk;
  }
  return guarded(err, plugin_path, [&] {
    const plugin::LoadedPlugin& p = plugin::load_plugin(plugin_path);
    size_t width = 0;
    for (const auto& f : *p.functions) width = std::max(width, f.name.size());
    for (const auto& f : *p.functions) {
      std::vector<std::string> args;
      for (size_t i = 0; i < f.arg_specs.size(); ++i)
        args.push_back(i < f.arg_names.size() ? f.arg_names[i] + ":" + f.arg_specs[i]
                                              : f.arg_specs[i]);
      std::string line = fmt::format("{:<{}}  ({})", f.name, width, fmt::join(args, ", "));
      if (!f.description.empty()) line += "  " + f.description;
      out << line << "\n";
    }
    return kOk;
  });
}

int print_jaxpr(const Source& src, bool json, const Style& style, std::ostream& out,
                std::ostream& err) {
  return guarded(err, describe(src), [&] {
    bool color = use_color(style.color);
    Jaxpr j = load_jaxpr(src);
    if (json)
      out << jaxpr_to_json(j) << "\n";
    else
      out << (color ? colorize_jaxpr(to_string(j)) : to_string(j)) << "\n";
    return kOk;
  });
}

int print_comms(const Source& src, std::ostream& out, std::ostream& err) {
  return guarded(err, describe(src), [&] {
    out << format_comms(comms_report(load_jaxpr(src)));
    return kOk;
  });
}

int print_version(std::ostream& out) {
  out << "cjax " << CJAX_VERSION << "\n";
  return kOk;
}

}  // namespace cjax::cli
