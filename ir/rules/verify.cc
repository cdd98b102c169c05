#include "ir/rules/verify.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <unordered_set>

#include "ir/axis_env.h"
#include "ir/errors.h"
#include "ir/primitive.h"
#include "ir/print/printer.h"
#include "ir/rules/registry.h"
#include "ir/sharding.h"

namespace cjax {
namespace {

// A verification failure on its way out of nested jaxprs: `where` grows a prefix per level
// (`eqn 3 (cond): branches[1]: eqn 0 (sin)`), `eqn_text` is the failing eqn, printed.
struct Failure {
  std::string where;
  std::string what;
  std::string eqn_text;
};

std::string describe(const Var& v) {
  if (!v) return "null";
  std::string type = v.aval().str_short();
  return v.hint().empty() ? type : fmt::format("{}:{}", v.hint(), type);
}

std::string eqn_label(size_t index, const Eqn& e) {
  std::string label = fmt::format("eqn {} ({})", index, e.prim ? e.prim->name : "null");
  if (e.source.known()) label += fmt::format(" from {}", e.source.summarize());
  return label;
}

std::string printed(const Eqn& e) {
  try {
    return to_string(e);
  } catch (const std::exception&) {
    return "";  // the message stays useful without it
  }
}

class Verifier {
 public:
  void jaxpr(const Jaxpr& j) {
    std::unordered_set<Var, VarHash> defined;
    if (!j.consts.empty() && j.consts.size() != j.constvars.size())
      throw Failure{"jaxpr",
                    fmt::format("the jaxpr has {} consts for {} constvars", j.consts.size(),
                                j.constvars.size()),
                    ""};
    for (size_t i = 0; i < j.consts.size(); ++i)
      if (j.constvars[i] && !j.consts[i].aval.same_type(j.constvars[i].aval()))
        throw Failure{"jaxpr",
                      fmt::format("const {} is {} but its constvar is {}", i,
                                  j.consts[i].aval.str_short(), describe(j.constvars[i])),
                      ""};
    bind(defined, j.constvars, "constvar");
    bind(defined, j.invars, "invar");

    for (size_t i = 0; i < j.eqns.size(); ++i) {
      const Eqn& e = j.eqns[i];
      try {
        eqn(defined, e);
      } catch (Failure& f) {
        f.where = f.where.empty() ? eqn_label(i, e) : eqn_label(i, e) + ": " + f.where;
        if (f.eqn_text.empty()) f.eqn_text = printed(e);
        throw;
      }
    }

    for (size_t i = 0; i < j.outvars.size(); ++i) {
      const Atom& a = j.outvars[i];
      if (!a.is_var()) continue;
      const Var& v = a.var();
      if (!v || v.is_drop() || !defined.count(v))
        throw Failure{"jaxpr", fmt::format("outvar {} ({}) is not defined", i, describe(v)), ""};
    }
  }

 private:
  static void bind(std::unordered_set<Var, VarHash>& defined, const std::vector<Var>& vars,
                   std::string_view kind) {
    for (size_t i = 0; i < vars.size(); ++i) {
      if (!vars[i]) throw Failure{"jaxpr", fmt::format("{} {} is null", kind, i), ""};
      if (!defined.insert(vars[i]).second)
        throw Failure{"jaxpr",
                      fmt::format("{} {} ({}) is defined twice", kind, i, describe(vars[i])), ""};
    }
  }

  void eqn(std::unordered_set<Var, VarHash>& defined, const Eqn& e) {
    if (!e.prim) throw Failure{"", "has no primitive", ""};
    for (size_t k = 0; k < e.inputs.size(); ++k) {
      if (!e.inputs[k].is_var()) continue;
      const Var& v = e.inputs[k].var();
      if (!v) throw Failure{"", fmt::format("input {} is null", k), ""};
      if (v.is_drop())
        throw Failure{"", fmt::format("input {} ({}) reads a dropped variable", k, describe(v)),
                      ""};
      if (!defined.count(v))
        throw Failure{"", fmt::format("input {} ({}) is used before it is defined", k, describe(v)),
                      ""};
    }
    // Nested jaxprs are closed: each is checked in a scope of its own. A shard_map's body sees
    // its mesh's axes (all_to_all's shape rule reads their sizes).
    std::vector<std::unique_ptr<AxisEnvScope>> mesh_axes;
    if (e.prim->name == "shard_map" && e.params.has("mesh")) {
      try {
        const MeshAxes mesh = mesh_from_param(e.params.at("mesh"));
        for (size_t i = 0; i < mesh.names.size(); ++i)
          mesh_axes.push_back(std::make_unique<AxisEnvScope>(mesh.names[i], mesh.sizes[i]));
      } catch (const Error&) {  // a malformed mesh: the shape rule below says so
      }
    }
    for (const auto& [key, value] : e.params) nested(value, key);
    mesh_axes.clear();
    if (!e.prim->opaque && e.prim->shape_rule) check_types(e);
    for (size_t k = 0; k < e.outputs.size(); ++k) {
      const Var& v = e.outputs[k];
      if (!v) throw Failure{"", fmt::format("output {} is null", k), ""};
      if (!defined.insert(v).second)
        throw Failure{"", fmt::format("output {} ({}) is already defined", k, describe(v)), ""};
    }
  }

  void nested(const ParamValue& value, const std::string& path) {
    if (value.is<JaxprRef>()) {
      if (!value.as<JaxprRef>()) return;
      try {
        jaxpr(*value.as<JaxprRef>());
      } catch (Failure& f) {
        f.where = f.where == "jaxpr" ? path : path + ": " + f.where;
        throw;
      }
      return;
    }
    const std::vector<ParamValue>* items = nullptr;
    if (value.is<ParamTuple>()) items = &value.as<ParamTuple>().items;
    if (value.is<ParamList>()) items = &value.as<ParamList>().items;
    if (!items) return;
    for (size_t i = 0; i < items->size(); ++i) nested((*items)[i], fmt::format("{}[{}]", path, i));
  }

  static void check_types(const Eqn& e) {
    std::vector<ShapedArray> in = avals_of(std::span<const Atom>(e.inputs));
    std::vector<ShapedArray> want;
    try {
      want = infer_avals(*e.prim, in, e.params);
    } catch (const TypeError& err) {
      throw Failure{"", err.what(), ""};
    }
    if (want.size() != e.outputs.size()) {
      std::vector<ShapedArray> got = avals_of(std::span<const Var>(e.outputs));
      throw Failure{
          "", fmt::format("has {} outputs but the shape rule gives {}", got.size(), want.size()),
          ""};
    }
    for (size_t k = 0; k < want.size(); ++k) {
      const ShapedArray& got = e.outputs[k].aval();
      if (got.same_type(want[k])) continue;
      std::string which = want.size() == 1 ? "output" : fmt::format("output {}", k);
      throw Failure{"",
                    fmt::format("{} {} does not match the shape rule's {}", which, got.str_short(),
                                want[k].str_short()),
                    ""};
    }
  }
};

}  // namespace

void verify(const Jaxpr& jaxpr) {
  try {
    Verifier().jaxpr(jaxpr);
  } catch (const Failure& f) {
    std::string msg = f.where == "jaxpr" ? f.what : fmt::format("{}: {}", f.where, f.what);
    if (!f.eqn_text.empty()) msg += "\n  in: " + f.eqn_text;
    throw VerifyError(msg);
  }
}

}  // namespace cjax
