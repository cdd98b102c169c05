#include "passes/checkpoint_names.h"

#include <set>

#include "ir/primitive.h"

namespace cjax {
namespace {

void collect(const Jaxpr& j, std::set<std::string>& out);

void collect(const ParamValue& v, std::set<std::string>& out) {
  if (v.is<JaxprRef>()) {
    if (v.as<JaxprRef>()) collect(*v.as<JaxprRef>(), out);
  } else if (v.is<ParamTuple>()) {
    for (const ParamValue& item : v.as<ParamTuple>().items) collect(item, out);
  } else if (v.is<ParamList>()) {
    for (const ParamValue& item : v.as<ParamList>().items) collect(item, out);
  }
}

void collect(const Jaxpr& j, std::set<std::string>& out) {
  for (const Eqn& e : j.eqns) {
    if (e.prim->name == "name" && e.params.has("name")) out.insert(e.params.get_string("name"));
    for (const auto& [key, value] : e.params) collect(value, out);
  }
}

}  // namespace

std::vector<std::string> checkpoint_names(const Jaxpr& jaxpr) {
  std::set<std::string> names;
  collect(jaxpr, names);
  return {names.begin(), names.end()};
}

}  // namespace cjax
