// The jaxpr printer. The document built here mirrors JAX's pp_toplevel_jaxpr / pp_jaxpr_skeleton /
// pp_eqn / pp_vars / pp_kv_pairs (jax/_src/core.py) so that the layout at width 80 is identical,
// and names are handed out in the same order because the document is built in JAX's order.
#include "ir/print/printer.h"

#include <deque>
#include <exception>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/policy.h"
#include "ir/primitive.h"

namespace cjax {

namespace {

using pp::Doc;

// 0 -> a, 25 -> z, 26 -> ba, 675 -> zz, 676 -> baa (no `aa`: a is a leading zero digit).
std::string encode_alphabetic(int64_t n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n);
  return s;
}

// ` at 0x7f12ab` -> ` at 0xXXXXXX`, as JAX masks addresses in function reprs.
std::string mask_addresses(std::string s) {
  static constexpr std::string_view kAt = " at 0x";
  auto is_hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  size_t pos = 0;
  while ((pos = s.find(kAt, pos)) != std::string::npos) {
    size_t i = pos + kAt.size();
    while (i < s.size() && is_hex(s[i])) s[i++] = 'X';
    pos = i;
  }
  return s;
}

// Python's repr() of a str.
std::string python_str_repr(const std::string& s) {
  char quote = '\'';
  if (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) quote = '"';
  std::string out(1, quote);
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

// Python's str() (repr = false) or repr() (repr = true) of a param value.
std::string python_str(const ParamValue& v, bool repr) {
  if (v.numpy_int && v.is<int64_t>()) return "np.int64(" + std::to_string(v.as<int64_t>()) + ")";
  struct Visitor {
    bool repr;
    std::string operator()(const NoneParam&) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return python_float_repr(d); }
    std::string operator()(const std::string& s) const { return repr ? python_str_repr(s) : s; }
    std::string operator()(DType t) const {
      std::string name(long_name(t));
      if (!repr) return name;
      // numpy quotes its builtin type names; ml_dtypes' bfloat16 prints as dtype(bfloat16).
      return t == DType::bf16 ? "dtype(" + name + ")" : "dtype('" + name + "')";
    }
    std::string operator()(const ParamTuple& t) const {
      std::string out = "(";
      for (size_t i = 0; i < t.items.size(); ++i) {
        if (i) out += ", ";
        out += python_str(t.items[i], true);
      }
      if (t.items.size() == 1) out += ',';
      return out + ")";
    }
    std::string operator()(const ParamList& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += ", ";
        out += python_str(l.items[i], true);
      }
      return out + "]";
    }
    // A jaxpr outside JAX's jaxpr-param cases prints as its own str(): a fresh printout.
    std::string operator()(const JaxprRef& j) const { return j ? to_string(*j) : "None"; }
    std::string operator()(const PolicyRef& p) const { return p ? p->repr() : "None"; }
    std::string operator()(const OpaqueParam& o) const { return o.text; }
    std::string operator()(const ObjectRef& o) const { return o ? o->repr() : "None"; }
  };
  return std::visit(Visitor{repr}, v.v);
}

bool is_jaxpr(const ParamValue& v) {
  return v.is<JaxprRef>() && v.as<JaxprRef>() != nullptr;
}

// The jaxprs JAX finds in params: a jaxpr value, or jaxprs directly inside a tuple value.
std::vector<const Jaxpr*> jaxprs_in_params(const Params& params) {
  std::vector<const Jaxpr*> out;
  for (const auto& [k, v] : params) {
    if (is_jaxpr(v)) out.push_back(v.as<JaxprRef>().get());
    if (v.is<ParamTuple>())
      for (const auto& item : v.as<ParamTuple>().items)
        if (is_jaxpr(item)) out.push_back(item.as<JaxprRef>().get());
  }
  return out;
}

// Which params print, in which order (the current format's rules).
std::vector<ParamRef> params_to_print(const Eqn& e) {
  if (e.prim && e.prim->print_params) {
    try {
      return e.prim->print_params(e.params);
    } catch (const std::exception&) {
      // A rule that rejects malformed params must not hide the eqn from an error message.
    }
  }
  std::vector<ParamRef> out;
  if (e.prim && e.prim->opaque) {
    for (const auto& [k, v] : e.params) out.push_back({k, &v});
    return out;
  }
  return sorted_params(e.params);
}

// Variable names for one printout (JAX's JaxprPpContext).
class Namer {
 public:
  std::string name(const Var& v) {
    if (!v) return "<null>";
    if (v.is_drop()) return "_";
    auto it = names_.find(v.id());
    if (it != names_.end()) return it->second;
    std::string n = fresh();
    names_.emplace(v.id(), n);
    return n;
  }
  bool has(const Var& v) const { return names_.count(v.id()) != 0; }
  void set(const Var& v, std::string name) { names_[v.id()] = std::move(name); }
  void reserve(const std::string& name) { reserved_.insert(name); }

 private:
  std::string fresh() {
    for (;;) {
      std::string n = encode_alphabetic(next_++);
      if (!reserved_.count(n)) return n;
    }
  }
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> reserved_;  // names of shared jaxprs
  int64_t next_ = 0;
};

class Printer {
 public:
  explicit Printer(TextFormat format = TextFormat::current) : format_(format) {}
  Namer names;

  // JAX's pp_toplevel_jaxpr: the shared `let` preambles, then the jaxpr.
  Doc toplevel(const Jaxpr& top) {
    // jax 0.4.30 printed neither: only DropVars were `_`, and every sub-jaxpr was inline.
    if (old()) return jaxpr(top);
    name_unused_outputs_drop(top);
    std::vector<std::pair<std::string, const Jaxpr*>> shared_list = find_shared(top);
    std::vector<Doc> docs;
    for (const auto& [name, j] : shared_list) {
      Doc body = skeleton(*j);
      docs.push_back(pp::concat({pp::text("let "), pp::text(name), pp::text(" = "), std::move(body),
                                 pp::text(" in"), pp::brk()}));
    }
    docs.push_back(jaxpr(top));
    return pp::concat(std::move(docs));
  }

  Doc jaxpr(const Jaxpr& j) {
    // As in JAX, a shared jaxpr whose name came out empty (`name=<>`) is printed inline.
    auto it = shared_.find(&j);
    if (it != shared_.end() && !it->second.empty()) return pp::text(it->second);
    return skeleton(j);
  }

  Doc eqn(const Eqn& e) {
    const bool is_jit = e.prim && (e.prim->name == "jit" || e.prim->name == "pjit");
    if (is_jit && !old()) suggest_jit_names(e);
    std::vector<Doc> parts;
    if (!e.outputs.empty()) {
      parts.push_back(binders(e.outputs));
      parts.push_back(pp::text(" = "));
    }
    parts.push_back(pp::text(is_jit && old() ? "pjit" : e.prim ? e.prim->name : "?"));
    parts.push_back(kv_pairs(old() ? params_to_print_0_4_30(e) : params_to_print(e)));
    Doc operands = atoms(e.inputs, "");
    parts.push_back(pp::text(" ") + operands);
    return pp::concat(std::move(parts));
  }

 private:
  TextFormat format_;
  std::unordered_map<const Jaxpr*, std::string> shared_;
  std::deque<ParamValue> made_params_;  // params the old format prints that the eqn lacks

  bool old() const { return format_ == TextFormat::jax_0_4_30; }

  // jax 0.4.30's params: broadcast_in_dim had no print rule (all its params sorted), cond had
  // `linear`, one False per operand after the index, and no primitive had the `sharding` or
  // `out_sharding` params later versions added (None unless set).
  std::vector<ParamRef> params_to_print_0_4_30(const Eqn& e) {
    const std::string_view prim = e.prim ? std::string_view(e.prim->name) : "";
    std::vector<ParamRef> out =
        prim == "broadcast_in_dim" ? sorted_params(e.params) : params_to_print(e);
    std::erase_if(out, [](const ParamRef& r) {
      return (r.key == "sharding" || r.key == "out_sharding") && r.value && r.value->is_none();
    });
    if (prim == "cond" && !e.params.has("linear") && !e.inputs.empty()) {
      made_params_.push_back(ParamValue::bools(std::vector<bool>(e.inputs.size() - 1, false)));
      out.push_back({"linear", &made_params_.back()});
      std::stable_sort(out.begin(), out.end(),
                       [](const ParamRef& a, const ParamRef& b) { return a.key < b.key; });
    }
    return out;
  }

  // A variable as printed: its name, and in the old format the `_` suffix its parsed name had.
  std::string display_name(const Var& v) {
    std::string n = names.name(v);
    if (old() && v && !v.is_drop() && n != "_" && v.hint().size() > 1 && v.hint().back() == '_')
      n += '_';
    return n;
  }

  // Top-level eqn outputs that nothing reads print as `_` (JAX >= 0.10.2 no longer inserts
  // DropVars; its printer names unused outputs `_` instead).
  void name_unused_outputs_drop(const Jaxpr& top) {
    std::unordered_set<const void*> used;
    for (const Atom& a : top.outvars)
      if (a.is_var()) used.insert(a.var().id());
    for (auto e = top.eqns.rbegin(); e != top.eqns.rend(); ++e) {
      for (const Var& v : e->outputs)
        if (v && !used.count(v.id())) names.set(v, "_");
      for (const Atom& a : e->inputs)
        if (a.is_var()) used.insert(a.var().id());
    }
  }

  // Sub-jaxprs referenced more than once (pointer identity), or with more than 10 eqns, in the
  // order a breadth-first walk first reaches them; named after the first `name` param of an eqn
  // holding them ("<lambda>" -> "lambda"), else "jaxpr"; repeated names get 1, 2, ... suffixes.
  std::vector<std::pair<std::string, const Jaxpr*>> find_shared(const Jaxpr& top) {
    std::deque<const Jaxpr*> queue{&top};
    std::vector<const Jaxpr*> order;
    std::unordered_map<const Jaxpr*, int> counts, visits;
    std::unordered_map<const Jaxpr*, std::string> given_names;
    while (!queue.empty()) {
      const Jaxpr* j = queue.front();
      queue.pop_front();
      if (visits[j]++ == 0) order.push_back(j);
      counts[j] += (j != &top && j->eqns.size() > 10) ? 2 : 1;
      // Only "used once" vs "more" matters, so a jaxpr's eqns are walked on its first two visits
      // only (JAX walks them on every visit, which is exponential for nested sharing and changes
      // no result: the first walk fixes names and order, the second makes every child shared).
      if (visits[j] > 2) continue;
      for (const Eqn& e : j->eqns) {
        std::vector<const Jaxpr*> subs = jaxprs_in_params(e.params);
        const ParamValue* name = e.params.find("name");
        for (const Jaxpr* s : subs) {
          queue.push_back(s);
          if (name && !name->is_none())
            given_names.emplace(s, preamble_name(python_str(*name, false)));
        }
      }
    }
    std::unordered_map<std::string, int> name_counts;
    std::vector<std::pair<std::string, const Jaxpr*>> out;
    for (const Jaxpr* j : order) {
      if (counts[j] == 1) continue;
      auto g = given_names.find(j);
      std::string name = g != given_names.end() && !g->second.empty() ? g->second : "jaxpr";
      if (int c = name_counts[name]; c > 0) {
        name_counts[name] += 1;
        name += std::to_string(c);
      }
      name_counts[name] += 1;
      names.reserve(name);
      shared_.emplace(j, name);
      out.emplace_back(name, j);
    }
    return out;
  }

  // A `let` name that reads back as a reference: the function's name without `<>`, or none (then
  // "jaxpr") when what is left would be read as part of a quoted string, a bracket or the next
  // param (fuzzing named a function `<lambda>'`: its printout did not parse back).
  static std::string preamble_name(const std::string& function_name) {
    std::string s = strip_angles(function_name);
    if (s.find_first_of("'\"[]{}=<>\n") != std::string::npos) return "";
    return s;
  }

  static std::string strip_angles(std::string s) {
    size_t b = s.find_first_not_of("<>");
    if (b == std::string::npos) return "";
    size_t e = s.find_last_not_of("<>");
    return s.substr(b, e - b + 1);
  }

  // JAX's suggest_same_var_names: inner vars take the outer names where the outer one is a var
  // not yet suggested and the inner one has no name yet.
  void suggest(std::span<const Atom> for_vars, std::span<const Atom> like_vars) {
    if (for_vars.size() != like_vars.size()) return;
    std::unordered_set<const void*> used_like;
    for (size_t i = 0; i < for_vars.size(); ++i) {
      const Atom& f = for_vars[i];
      const Atom& l = like_vars[i];
      if (!l.is_var() || !l.var() || used_like.count(l.var().id())) continue;
      if (!f.is_var() || !f.var() || names.has(f.var())) continue;
      used_like.insert(l.var().id());
      names.set(f.var(), names.name(l.var()));
    }
  }

  void suggest_jit_names(const Eqn& e) {
    const ParamValue* p = e.params.find("jaxpr");
    if (!p || !is_jaxpr(*p)) return;
    const Jaxpr& inner = *p->as<JaxprRef>();
    if (shared_.count(&inner)) return;
    std::vector<Atom> inner_in(inner.invars.begin(), inner.invars.end());
    suggest(inner_in, e.inputs);
    std::vector<Atom> outer_out(e.outputs.begin(), e.outputs.end());
    suggest(inner.outvars, outer_out);
  }

  // JAX's pp_jaxpr_skeleton.
  Doc skeleton(const Jaxpr& j) {
    Doc constvars = binders(j.constvars);
    Doc invars = binders(j.invars);
    std::vector<Doc> eqn_docs;
    eqn_docs.reserve(j.eqns.size());
    for (const Eqn& e : j.eqns) eqn_docs.push_back(eqn(e));
    Doc eqns = pp::join(pp::brk("; "), std::move(eqn_docs));
    Doc outs = atoms(j.outvars, ",");
    Doc outvars =
        pp::concat({pp::text("("), std::move(outs), pp::text(j.outvars.size() != 1 ? ")" : ",)")});
    Doc body =
        pp::concat({pp::text("{ "), pp::text("lambda "), std::move(constvars), pp::text("; "),
                    std::move(invars), pp::text(". "), pp::text("let"),
                    pp::nest(2, pp::brk() + eqns), pp::brk(), pp::text("in "), std::move(outvars)});
    // The closing " }" is inside the group: it counts when deciding whether the jaxpr fits.
    return pp::group(pp::nest(2, std::move(body)) + pp::text(" }"));
  }

  // JAX's pp_vars: each separator break is its own group, so a long list fills lines greedily.
  static Doc var_list(std::vector<Doc> items, const char* sep) {
    Doc separator = pp::text(sep) + pp::group(pp::brk());
    return pp::nest(2, pp::group(pp::join(separator, std::move(items))));
  }

  Doc binders(std::span<const Var> vs) {
    std::vector<Doc> items;
    items.reserve(vs.size());
    for (const Var& v : vs) {
      std::string n = display_name(v);
      items.push_back(pp::text(n + ":" + (v ? v.aval().str_short() : "?")));
    }
    return var_list(std::move(items), "");
  }

  Doc atoms(std::span<const Atom> as, const char* sep) {
    std::vector<Doc> items;
    items.reserve(as.size());
    for (const Atom& a : as) {
      if (a.is_var()) {
        items.push_back(pp::text(display_name(a.var())));
      } else {
        const Literal& l = a.literal();
        items.push_back(pp::text(old() ? l.value_str() : l.value_str() + ":" + l.aval.str_short()));
      }
    }
    return var_list(std::move(items), sep);
  }

  // JAX's pp_kv_pairs.
  Doc kv_pairs(const std::vector<ParamRef>& params) {
    if (params.empty()) return pp::nil();
    std::vector<Doc> kvs;
    kvs.reserve(params.size());
    for (const ParamRef& p : params) {
      Doc value = p.value ? param_doc(*p.value) : pp::text("None");
      kvs.push_back(pp::text(std::string(p.key) + "=") + value);
    }
    Doc inner = pp::concat({pp::text("["), pp::brk(""), pp::join(pp::brk(), std::move(kvs))});
    return pp::group(pp::concat({pp::nest(2, std::move(inner)), pp::brk(""), pp::text("]")}));
  }

  Doc param_doc(const ParamValue& v) {
    if (is_jaxpr(v)) return jaxpr(*v.as<JaxprRef>());
    if (v.is<ParamTuple>()) {
      const auto& items = v.as<ParamTuple>().items;
      bool all_jaxprs = true;
      for (const auto& i : items) all_jaxprs = all_jaxprs && is_jaxpr(i);
      if (all_jaxprs) return jaxprs(items);
    }
    return pp::text(mask_addresses(python_str(v, false)));
  }

  // JAX's pp_jaxprs: a tuple of jaxprs (cond's branches), one per line when it does not fit.
  Doc jaxprs(const std::vector<ParamValue>& items) {
    std::vector<Doc> docs;
    docs.reserve(items.size());
    for (const auto& i : items) docs.push_back(jaxpr(*i.as<JaxprRef>()));
    Doc inner = pp::concat({pp::text("("), pp::brk(""), pp::join(pp::brk(), std::move(docs))});
    return pp::group(pp::concat({pp::nest(2, std::move(inner)), pp::brk(""), pp::text(")")}));
  }
};

}  // namespace

std::string to_string(const Jaxpr& j, int width) {
  Printer p;
  return pp::format(p.toplevel(j), width);
}

std::string to_string(const Jaxpr& j, TextFormat format, int width) {
  Printer p(format);
  return pp::format(p.toplevel(j), width);
}

std::string to_string(const Eqn& e) {
  Printer p;
  return pp::format(p.eqn(e), 80);
}

std::string param_value_to_string(const ParamValue& v) {
  return mask_addresses(python_str(v, false));
}

}  // namespace cjax
