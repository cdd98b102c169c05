// Test helper: builds jaxprs by hand from short binder/operand spellings, so goldens read like the
// text they should print to. Names given here only let the test refer to its vars; they are not
// stored in the IR (the printer must invent the printed names itself).
//   JaxprBuilder b;
//   b.in("a:f32[3]");
//   b.eqn(prim("add"), "b:f32[3]", "a 1.0:f32[]");
//   b.out("b");
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace cjax::test {

inline std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// "f32[5,4]" -> ShapedArray.
inline ShapedArray aval(const std::string& s) {
  size_t lb = s.find('[');
  auto dt = dtype_from_short_name(s.substr(0, lb));
  if (lb == std::string::npos || !dt) throw std::runtime_error("bad aval " + s);
  Shape shape;
  std::string dims = s.substr(lb + 1, s.size() - lb - 2);
  for (size_t p = 0; p < dims.size();) {
    size_t c = dims.find(',', p);
    if (c == std::string::npos) c = dims.size();
    shape.push_back(std::stoll(dims.substr(p, c - p)));
    p = c + 1;
  }
  return ShapedArray(*dt, shape);
}

// "1.0:f32[]", "2:i32[]", "True:bool[]", "[...]:f32[3]" -> Literal.
inline Literal literal(const std::string& s) {
  size_t colon = s.find(':');
  std::string v = s.substr(0, colon);
  ShapedArray a = aval(s.substr(colon + 1));
  if (v == "[...]") {
    Literal l;
    l.aval = a;
    l.elided = true;
    return l;
  }
  if (a.dtype == DType::bool_) return Literal::of_bool(v == "True");
  if (is_floating(a.dtype)) return Literal::of(std::strtod(v.c_str(), nullptr), a.dtype);
  return Literal::of_int(std::stoll(v), a.dtype);
}

// Primitives local to the tests (the built-in table lives in ir/rules/ and is not used here).
inline const Primitive& prim(const std::string& name) {
  static std::map<std::string, Primitive> table;
  auto it = table.find(name);
  if (it != table.end()) return it->second;
  Primitive p;
  p.name = name;
  if (name == "dot_general") {
    // JAX's dot_general rule: params whose value is None are hidden.
    p.print_params = [](const Params& ps) {
      std::vector<ParamRef> out;
      for (const ParamRef& r : sorted_params(ps))
        if (!r.value->is_none()) out.push_back(r);
      return out;
    };
  }
  if (name == "jit" || name == "custom_vjp_call") {
    // name= first, then the rest sorted.
    p.print_params = [](const Params& ps) {
      std::vector<ParamRef> out;
      if (const ParamValue* n = ps.find("name")) out.push_back({"name", n});
      for (const ParamRef& r : sorted_params(ps))
        if (r.key != "name") out.push_back(r);
      return out;
    };
  }
  return table.emplace(name, std::move(p)).first->second;
}

class JaxprBuilder {
 public:
  // Binders: "a:f32[3] b:i32[]"; "_:f32[]" makes a dropped var.
  JaxprBuilder& constvars(const std::string& binders) {
    for (Var& v : bind(binders)) j_.constvars.push_back(v);
    return *this;
  }
  JaxprBuilder& in(const std::string& binders) {
    for (Var& v : bind(binders)) j_.invars.push_back(v);
    return *this;
  }
  JaxprBuilder& eqn(const Primitive& p, const std::string& outs, const std::string& ins,
                    Params params = {}) {
    Eqn e;
    e.prim = &p;
    e.inputs = atoms(ins);
    e.outputs = bind(outs);
    e.params = std::move(params);
    j_.eqns.push_back(std::move(e));
    return *this;
  }
  JaxprBuilder& eqn(const std::string& p, const std::string& outs, const std::string& ins,
                    Params params = {}) {
    return eqn(prim(p), outs, ins, std::move(params));
  }
  JaxprBuilder& out(const std::string& operands) {
    j_.outvars = atoms(operands);
    return *this;
  }
  const Var& var(const std::string& name) const {
    auto it = vars_.find(name);
    if (it == vars_.end()) throw std::runtime_error("undefined var " + name);
    return it->second;
  }
  std::shared_ptr<const Jaxpr> build() const { return std::make_shared<const Jaxpr>(j_); }
  const Jaxpr& jaxpr() const { return j_; }

 private:
  std::vector<Var> bind(const std::string& binders) {
    std::vector<Var> out;
    for (const std::string& b : split_ws(binders)) {
      size_t colon = b.find(':');
      std::string name = b.substr(0, colon);
      ShapedArray a = aval(b.substr(colon + 1));
      if (name == "_") {
        out.push_back(Var::drop(a));
      } else {
        out.emplace_back(a);
        vars_[name] = out.back();
      }
    }
    return out;
  }
  std::vector<Atom> atoms(const std::string& operands) {
    std::vector<Atom> out;
    for (const std::string& t : split_ws(operands)) {
      if (t.find(':') != std::string::npos)
        out.emplace_back(literal(t));
      else
        out.emplace_back(var(t));
    }
    return out;
  }

  Jaxpr j_;
  std::map<std::string, Var> vars_;
};

// (([lc], [rc]), ([lb], [rb])) for dot_general.
inline ParamValue dims(std::vector<int64_t> lc, std::vector<int64_t> rc,
                       std::vector<int64_t> lb = {}, std::vector<int64_t> rb = {}) {
  return DotDimensionNumbers{std::move(lc), std::move(rc), std::move(lb), std::move(rb)}.to_param();
}

inline Params dot_params(ParamValue dn) {
  return Params{{"dimension_numbers", std::move(dn)},
                {"precision", NoneParam{}},
                {"preferred_element_type", DType::f32},
                {"out_sharding", NoneParam{}}};
}

}  // namespace cjax::test
