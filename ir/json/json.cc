#include "ir/json/json.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "ir/errors.h"
#include "ir/json/base64.h"
#include "ir/limits.h"
#include "ir/policy.h"
#include "ir/primitive.h"
#include "ir/rules/registry.h"

namespace cjax {
namespace {

// ordered_json keeps keys in insertion order: params print in their order for opaque primitives.
using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "cjax-jaxpr";
constexpr int kVersion = 1;
// The deepest JSON a valid document has: a param value sits 6 levels down (document, "jaxprs",
// jaxpr, "eqns", eqn, "params"), and a param tuple takes two JSON levels ({"tuple": [...]}) per
// level of nesting (ir/limits.h). Checked on the text before nlohmann::json builds anything: its
// DOM copies, compares and prints recursively.
constexpr int kMaxJsonDepth = 2 * kMaxNesting + 8;

Json float_json(double v) {
  if (std::isnan(v)) return Json{{"float", "nan"}};
  if (std::isinf(v)) return Json{{"float", v > 0 ? "inf" : "-inf"}};
  return v;
}

Json aval_json(const ShapedArray& a) {
  Json j{{"dtype", std::string(short_name(a.dtype))}, {"shape", a.shape}};
  if (a.weak_type) j["weak_type"] = true;
  if (a.annotations) {
    const AvalAnnotations& n = *a.annotations;
    Json ann = Json::object();
    if (!n.dtype_text.empty()) ann["dtype_text"] = n.dtype_text;
    if (!n.dim_suffix.empty()) ann["dim_suffix"] = n.dim_suffix;
    if (!n.inner_suffix.empty()) ann["inner_suffix"] = n.inner_suffix;
    if (!n.suffix.empty()) ann["suffix"] = n.suffix;
    j["annotations"] = ann;
  }
  return j;
}

class Writer {
 public:
  // The index of `j` in the document's jaxpr list; sub-jaxprs come first (lower indices).
  size_t add(const Jaxpr& j) {
    if (auto it = index_.find(&j); it != index_.end()) return it->second;
    Json out = one(j);
    index_[&j] = jaxprs_.size();
    jaxprs_.push_back(std::move(out));
    return jaxprs_.size() - 1;
  }
  Json document(size_t main) {
    return Json{{"format", kFormat}, {"version", kVersion}, {"main", main}, {"jaxprs", jaxprs_}};
  }

 private:
  Json one(const Jaxpr& j) {
    // Ids are unique in the whole document: passes may share a Var between jaxprs, and the
    // printer names variables by identity across a printout.
    std::unordered_map<const void*, size_t>& ids = ids_;
    auto binder = [&](const Var& v) {
      Json b{{"aval", aval_json(v.aval())}};
      if (v.is_drop()) {
        b["drop"] = true;
        return b;
      }
      size_t id = ids.emplace(v.id(), ids.size()).first->second;
      b = Json{{"id", id}, {"aval", b["aval"]}};
      if (!v.hint().empty()) b["name"] = v.hint();
      return b;
    };
    auto atom = [&](const Atom& a) -> Json {
      if (a.is_var()) {
        auto it = ids.find(a.var().id());
        // An undefined operand cannot come from a verified jaxpr; keep it visible, not silent.
        if (it == ids.end()) throw VerifyError("jaxpr_to_json: an operand is not defined");
        return Json{{"var", it->second}};
      }
      const Literal& l = a.literal();
      Json out;
      if (l.elided) {
        out["literal"] = nullptr;
        out["elided"] = true;
      } else {
        std::visit(
            [&](const auto& v) {
              using T = std::decay_t<decltype(v)>;
              if constexpr (std::is_same_v<T, double>)
                out["literal"] = float_json(v);
              else
                out["literal"] = v;
            },
            l.value);
      }
      out["aval"] = aval_json(l.aval);
      return out;
    };

    Json out;
    out["constvars"] = Json::array();
    for (const Var& v : j.constvars) out["constvars"].push_back(binder(v));
    out["invars"] = Json::array();
    for (const Var& v : j.invars) out["invars"].push_back(binder(v));
    out["eqns"] = Json::array();
    for (const Eqn& e : j.eqns) {
      Json eq{{"primitive", e.prim ? e.prim->name : ""}};
      eq["inputs"] = Json::array();
      for (const Atom& a : e.inputs) eq["inputs"].push_back(atom(a));
      eq["outputs"] = Json::array();
      for (const Var& v : e.outputs) eq["outputs"].push_back(binder(v));
      eq["params"] = Json::object();
      for (const auto& [key, value] : e.params) eq["params"][key] = param(value);
      if (e.source.known())
        eq["source"] = Json{{"file", std::string(display_file(e.source.file))},
                            {"line", e.source.line},
                            {"column", e.source.column},
                            {"function", e.source.function}};
      out["eqns"].push_back(std::move(eq));
    }
    out["outvars"] = Json::array();
    for (const Atom& a : j.outvars) out["outvars"].push_back(atom(a));
    if (!j.consts.empty()) {
      out["consts"] = Json::array();
      for (const ConstValue& c : j.consts) {
        std::string_view bytes(static_cast<const char*>(c.data.get()),
                               c.data ? c.aval.nbytes() : 0);
        out["consts"].push_back(
            Json{{"aval", aval_json(c.aval)}, {"data", json_detail::base64_encode(bytes)}});
      }
    }
    if (j.debug)
      out["debug"] =
          Json{{"function_name", j.debug->function_name}, {"arg_names", j.debug->arg_names}};
    return out;
  }

  Json param(const ParamValue& p) {
    return std::visit(
        [&](const auto& v) -> Json {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, NoneParam>)
            return nullptr;
          else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> ||
                             std::is_same_v<T, std::string>)
            return v;
          else if constexpr (std::is_same_v<T, double>)
            return float_json(v);
          else if constexpr (std::is_same_v<T, DType>)
            return Json{{"dtype", std::string(long_name(v))}};
          else if constexpr (std::is_same_v<T, ParamTuple> || std::is_same_v<T, ParamList>) {
            Json items = Json::array();
            for (const ParamValue& x : v.items) items.push_back(param(x));
            if constexpr (std::is_same_v<T, ParamTuple>)
              return Json{{"tuple", items}};
            else
              return items;
          } else if constexpr (std::is_same_v<T, JaxprRef>) {
            if (!v) return nullptr;
            return Json{{"jaxpr", add(*v)}};
          } else if constexpr (std::is_same_v<T, PolicyRef>) {
            return Json{{"policy", v ? v->repr() : std::string("None")}};
          } else if constexpr (std::is_same_v<T, ObjectRef>) {
            return Json{{"opaque", v ? v->repr() : std::string("None")}};  // read back as text
          } else {
            return Json{{"opaque", v.text}};
          }
        },
        p.v);
  }

  std::vector<Json> jaxprs_;
  std::unordered_map<const Jaxpr*, size_t> index_;
  std::unordered_map<const void*, size_t> ids_;
};

// ---- reading ----

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(fmt::format("JSON jaxpr: {}: {}", path, what));
}

// A remat policy read from JSON: only its printed form is known, so it prints and writes back
// exactly but cannot decide what to save.
class ReprPolicy : public Policy {
 public:
  explicit ReprPolicy(std::string repr) : repr_(std::move(repr)) {}
  std::string repr() const override { return repr_; }
  PolicyDecision decide(const Primitive&, std::span<const ShapedArray>,
                        const Params&) const override {
    throw UnsupportedError(fmt::format(
        "the remat policy {} was read from JSON, which keeps only its name; trace the program "
        "again to apply it",
        repr_));
  }

 private:
  std::string repr_;
};

// SourceInfo holds static C strings: strings read from JSON live as long as the process.
const char* intern(const std::string& s) {
  static std::mutex mu;
  static auto* pool = new std::unordered_set<std::string>();
  std::lock_guard lock(mu);
  return pool->insert(s).first->c_str();
}

// 1-based line and column of `offset` in `text`.
std::pair<int, int> line_column(std::string_view text, size_t offset) {
  int line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// Rejects text whose arrays and objects nest deeper than kMaxJsonDepth, without recursion. Text
// that is not JSON at all is left to the parser's message.
void check_json_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        auto [line, col] = line_column(text, i);
        throw ParseError(
            line, col,
            fmt::format("JSON nested deeper than {} levels is not supported", kMaxJsonDepth));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

class Reader {
 public:
  JaxprRef read(const Json& doc) {
    if (!doc.is_object()) fail("$", "the document is not an object");
    const Json& format = field(doc, "format", "$");
    if (format != kFormat) fail("$.format", fmt::format("expected \"{}\"", kFormat));
    const Json& version = field(doc, "version", "$");
    if (!version.is_number_integer() || version.get<int64_t>() != kVersion)
      fail("$.version", fmt::format("this cjax reads version {}", kVersion));
    const Json& list = field(doc, "jaxprs", "$");
    if (!list.is_array() || list.empty()) fail("$.jaxprs", "expected a non-empty array");
    size_t main = index(field(doc, "main", "$"), "$.main", list.size());
    for (size_t i = 0; i < list.size(); ++i)
      done_.push_back(one(list[i], fmt::format("jaxprs[{}]", i)));
    if (expanded_eqn_count(*done_[main]) > kMaxExpandedEqns)
      fail(fmt::format("jaxprs[{}]", main), expansion_limit_message());
    return done_[main];
  }

 private:
  static const Json& field(const Json& obj, const char* key, const std::string& path) {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, fmt::format("missing \"{}\"", key));
    return *it;
  }
  static const Json& array_field(const Json& obj, const char* key, const std::string& path) {
    const Json& a = field(obj, key, path);
    if (!a.is_array()) fail(path + "." + key, "expected an array");
    return a;
  }
  static size_t index(const Json& j, const std::string& path, size_t limit) {
    if (!j.is_number_unsigned() || j.get<uint64_t>() >= limit)
      fail(path, fmt::format("expected an index below {}", limit));
    return j.get<size_t>();
  }
  static std::string string(const Json& j, const std::string& path) {
    if (!j.is_string()) fail(path, "expected a string");
    return j.get<std::string>();
  }
  static int64_t integer(const Json& j, const std::string& path) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(path, "integer out of range");
    if (!j.is_number_integer()) fail(path, "expected an integer");
    return j.get<int64_t>();
  }
  static double floating(const Json& j, const std::string& path) {
    if (j.is_number()) return j.get<double>();
    if (j.is_object() && j.size() == 1 && j.contains("float")) {
      const Json& s = j["float"];
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(path, "expected a number or {\"float\": \"nan\" | \"inf\" | \"-inf\"}");
  }

  static ShapedArray aval(const Json& j, const std::string& path) {
    std::string d = string(field(j, "dtype", path), path + ".dtype");
    ShapedArray a;
    if (d == "opaque")
      a.dtype = DType::opaque;
    else if (auto t = dtype_from_short_name(d))
      a.dtype = *t;
    else
      fail(path + ".dtype", fmt::format("unknown dtype '{}'", d));
    const Json& shape = array_field(j, "shape", path);
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t n = integer(shape[i], fmt::format("{}.shape[{}]", path, i));
      if (n < 0) fail(fmt::format("{}.shape[{}]", path, i), "negative dimension");
      a.shape.push_back(n);
    }
    if (std::string why = shape_limit_error(a.dtype, a.shape); !why.empty())
      fail(path + ".shape", why);
    if (auto w = j.find("weak_type"); w != j.end()) {
      if (!w->is_boolean()) fail(path + ".weak_type", "expected true or false");
      a.weak_type = w->get<bool>();
    }
    if (auto an = j.find("annotations"); an != j.end()) {
      std::string p = path + ".annotations";
      if (!an->is_object()) fail(p, "expected an object");
      auto n = std::make_shared<AvalAnnotations>();
      if (an->contains("dtype_text"))
        n->dtype_text = string((*an)["dtype_text"], p + ".dtype_text");
      if (an->contains("dim_suffix")) {
        const Json& ds = array_field(*an, "dim_suffix", p);
        if (ds.size() != a.shape.size()) fail(p + ".dim_suffix", "needs one entry per dimension");
        for (const Json& s : ds) n->dim_suffix.push_back(string(s, p + ".dim_suffix"));
      }
      if (an->contains("inner_suffix"))
        n->inner_suffix = string((*an)["inner_suffix"], p + ".inner_suffix");
      if (an->contains("suffix")) n->suffix = string((*an)["suffix"], p + ".suffix");
      a.annotations = std::move(n);
    }
    if (a.dtype == DType::opaque && (!a.annotations || a.annotations->dtype_text.empty()))
      fail(path, "an opaque dtype needs annotations.dtype_text");
    return a;
  }

  // `level` is the level of nesting (ir/limits.h) a tuple, list or jaxpr takes in this position;
  // `reach` becomes at least the deepest level the value reaches.
  ParamValue param(const Json& j, const std::string& path, int level, int& reach) {
    auto enter = [&](const std::string& p, int height) {
      if (level + height - 1 > kMaxNesting) fail(p, nesting_limit_message());
      reach = std::max(reach, level + height - 1);
    };
    if (j.is_null()) return NoneParam{};
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer()) return integer(j, path);
    if (j.is_number_float()) return j.get<double>();
    if (j.is_string()) return j.get<std::string>();
    if (j.is_array()) {
      enter(path, 1);
      ParamList l;
      for (size_t i = 0; i < j.size(); ++i)
        l.items.push_back(param(j[i], fmt::format("{}[{}]", path, i), level + 1, reach));
      return l;
    }
    if (j.is_object() && j.size() == 1) {
      // Not `*j.items().begin()`: its key() refers into a temporary proxy (ASan:
      // stack-use-after-scope).
      const std::string& key = j.begin().key();
      const Json& v = j.begin().value();
      if (key == "float") return floating(j, path);
      if (key == "dtype") {
        auto t = dtype_from_long_name(string(v, path + ".dtype"));
        if (!t) fail(path + ".dtype", "unknown dtype name");
        return *t;
      }
      if (key == "tuple") {
        if (!v.is_array()) fail(path + ".tuple", "expected an array");
        enter(path, 1);
        ParamTuple t;
        for (size_t i = 0; i < v.size(); ++i)
          t.items.push_back(param(v[i], fmt::format("{}.tuple[{}]", path, i), level + 1, reach));
        return t;
      }
      if (key == "jaxpr") {
        // Only earlier entries: the list is in dependency order, so references cannot cycle.
        size_t k = index(v, path + ".jaxpr", done_.size());
        // Its whole height counts here: a list of jaxprs each calling the one before nests
        // deeply with no deep JSON.
        enter(path + ".jaxpr", heights_[k]);
        return JaxprRef(done_[k]);
      }
      if (key == "policy")
        return PolicyRef(std::make_shared<ReprPolicy>(string(v, path + ".policy")));
      if (key == "opaque") return OpaqueParam{string(v, path + ".opaque")};
    }
    fail(path, "not a param value (see docs/jaxpr-json.md)");
  }

  // Reads jaxprs[i]; adds its height (the levels of nesting it spans) to heights_.
  JaxprRef one(const Json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object");
    int height = 1;
    auto out = std::make_shared<Jaxpr>();
    std::unordered_map<uint64_t, Var> vars;  // those this jaxpr defines
    auto binder = [&](const Json& b, const std::string& p) {
      ShapedArray a = aval(field(b, "aval", p), p + ".aval");
      if (auto d = b.find("drop"); d != b.end() && *d == true) return Var::drop(a);
      const Json& id_json = field(b, "id", p);
      if (!id_json.is_number_unsigned()) fail(p + ".id", "expected a non-negative integer");
      uint64_t id = id_json.get<uint64_t>();
      // The same id in another jaxpr is the same variable (see Writer::one).
      auto [it, fresh] = all_vars_.emplace(id, Var());
      if (fresh) {
        it->second = Var(a);
        if (auto n = b.find("name"); n != b.end()) it->second.set_hint(string(*n, p + ".name"));
      } else if (!it->second.aval().same_type(a) || it->second.is_drop()) {
        fail(p + ".aval", fmt::format("variable {} has another type elsewhere", id));
      }
      if (!vars.emplace(id, it->second).second)
        fail(p + ".id", fmt::format("variable {} is defined twice", id));
      return it->second;
    };
    auto atom = [&](const Json& a, const std::string& p) -> Atom {
      if (!a.is_object()) fail(p, "expected an object");
      if (auto v = a.find("var"); v != a.end()) {
        if (!v->is_number_unsigned()) fail(p + ".var", "expected a variable id");
        auto it = vars.find(v->get<uint64_t>());
        if (it == vars.end())
          fail(p + ".var",
               fmt::format("variable {} is used before it is defined", v->get<uint64_t>()));
        if (it->second.is_drop()) fail(p + ".var", "reads a dropped variable");
        return it->second;
      }
      Literal l;
      l.aval = aval(field(a, "aval", p), p + ".aval");
      const Json& v = field(a, "literal", p);
      if (auto e = a.find("elided"); e != a.end()) {
        if (*e != true) fail(p + ".elided", "expected true (or no \"elided\")");
        if (!v.is_null()) fail(p + ".literal", "an elided literal has null as its value");
        l.elided = true;
        return l;
      }
      if (!l.aval.shape.empty()) fail(p, "a literal is a scalar (or elided)");
      // The value's kind follows the dtype, as Literal::of builds it.
      DType t = l.aval.dtype;
      std::string vp = p + ".literal";
      if (t == DType::bool_ || (t == DType::opaque && v.is_boolean())) {
        if (!v.is_boolean()) fail(vp, "a bool literal is true or false");
        l.value = v.get<bool>();
      } else if (is_floating(t) || (t == DType::opaque && !v.is_number_integer())) {
        l.value = floating(v, vp);
      } else if (is_unsigned_integer(t)) {
        if (!v.is_number_unsigned()) fail(vp, "expected a non-negative integer");
        l.value = v.get<uint64_t>();
      } else {
        l.value = integer(v, vp);
      }
      return l;
    };
    auto binders = [&](const Json& obj, const char* key, const std::string& p) {
      std::vector<Var> vs;
      const Json& a = array_field(obj, key, p);
      for (size_t i = 0; i < a.size(); ++i) {
        vs.push_back(binder(a[i], fmt::format("{}.{}[{}]", p, key, i)));
        if (vs.back().is_drop() && std::string_view(key) != "outputs")
          fail(fmt::format("{}.{}[{}]", p, key, i), "only eqn outputs may be dropped");
      }
      return vs;
    };

    out->constvars = binders(j, "constvars", path);
    out->invars = binders(j, "invars", path);
    const Json& eqns = array_field(j, "eqns", path);
    for (size_t k = 0; k < eqns.size(); ++k) {
      std::string p = fmt::format("{}.eqns[{}]", path, k);
      const Json& e = eqns[k];
      Eqn eq;
      std::string name = string(field(e, "primitive", p), p + ".primitive");
      if (name.empty()) fail(p + ".primitive", "empty primitive name");
      eq.prim = find_primitive(name);
      if (!eq.prim) eq.prim = &opaque_primitive(name);
      const Json& ins = array_field(e, "inputs", p);
      for (size_t i = 0; i < ins.size(); ++i)
        eq.inputs.push_back(atom(ins[i], fmt::format("{}.inputs[{}]", p, i)));
      if (auto ps = e.find("params"); ps != e.end()) {
        if (!ps->is_object()) fail(p + ".params", "expected an object");
        for (const auto& [key, value] : ps->items())
          eq.params.set(key, param(value, fmt::format("{}.params.{}", p, key), 2, height));
      }
      if (auto s = e.find("source"); s != e.end()) {
        std::string sp = p + ".source";
        eq.source.file = intern(string(field(*s, "file", sp), sp + ".file"));
        eq.source.function = intern(string(field(*s, "function", sp), sp + ".function"));
        int64_t line = integer(field(*s, "line", sp), sp + ".line");
        int64_t col = integer(field(*s, "column", sp), sp + ".column");
        if (line < 0 || col < 0 || line > UINT32_MAX || col > UINT32_MAX)
          fail(sp, "line or column out of range");
        eq.source.line = static_cast<uint32_t>(line);
        eq.source.column = static_cast<uint32_t>(col);
      }
      eq.outputs = binders(e, "outputs", p);  // after the inputs: an eqn cannot read its outputs
      out->eqns.push_back(std::move(eq));
    }
    const Json& outs = array_field(j, "outvars", path);
    for (size_t i = 0; i < outs.size(); ++i)
      out->outvars.push_back(atom(outs[i], fmt::format("{}.outvars[{}]", path, i)));
    if (auto cs = j.find("consts"); cs != j.end()) {
      if (!cs->is_array() || cs->size() != out->constvars.size())
        fail(path + ".consts", "expected one entry per constvar");
      for (size_t i = 0; i < cs->size(); ++i) {
        std::string p = fmt::format("{}.consts[{}]", path, i);
        ConstValue c{aval(field((*cs)[i], "aval", p), p + ".aval"), nullptr};
        if (!c.aval.same_type(out->constvars[i].aval()))
          fail(p + ".aval", "differs from the constvar's aval");
        std::string text = string(field((*cs)[i], "data", p), p + ".data");
        if (c.aval.dtype == DType::opaque ||
            json_detail::base64_decoded_size(text) != c.aval.nbytes())
          fail(p + ".data", fmt::format("expected base64 of {} bytes", c.aval.nbytes()));
        auto bytes = json_detail::base64_decode(text);
        if (!bytes) fail(p + ".data", "not valid base64");
        auto storage = std::shared_ptr<char[]>(new char[bytes->size() + 1]);
        std::memcpy(storage.get(), bytes->data(), bytes->size());
        c.data = std::shared_ptr<const void>(storage, storage.get());
        out->consts.push_back(std::move(c));
      }
    }
    if (auto d = j.find("debug"); d != j.end()) {
      std::string p = path + ".debug";
      auto info = std::make_shared<DebugInfo>();
      info->function_name = string(field(*d, "function_name", p), p + ".function_name");
      const Json& names = array_field(*d, "arg_names", p);
      for (const Json& n : names) info->arg_names.push_back(string(n, p + ".arg_names"));
      out->debug = std::move(info);
    }
    heights_.push_back(height);
    return out;
  }

  std::vector<JaxprRef> done_;
  std::vector<int> heights_;  // per entry of done_
  std::unordered_map<uint64_t, Var> all_vars_;
};

}  // namespace

std::string jaxpr_to_json(const Jaxpr& jaxpr, int indent) {
  Writer w;
  size_t main = w.add(jaxpr);
  return w.document(main).dump(indent, ' ', false, Json::error_handler_t::replace);
}

JaxprRef jaxpr_from_json(std::string_view text) {
  check_json_depth(text);
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based; turn it into the line and column of the offending character.
    auto [line, col] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string msg = e.what();
    if (auto p = msg.find("; "); p != std::string::npos) msg = msg.substr(p + 2);
    throw ParseError(line, col, "invalid JSON: " + msg);
  } catch (const Json::exception& e) {  // e.g. out_of_range: a number too big for a double
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw Error("JSON jaxpr: invalid JSON: " + msg);
  }
  return Reader().read(doc);
}

bool looks_like_jaxpr_json(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || text[i] != '{') return false;
  size_t k = text.find_first_not_of(" \t\r\n", i + 1);
  return k != std::string_view::npos && (text[k] == '"' || text[k] == '}');
}

}  // namespace cjax
