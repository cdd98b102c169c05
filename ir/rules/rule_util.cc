#include "ir/rules/rule_util.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/errors.h"

namespace cjax::rules {

Primitive make_primitive(std::string name, ShapeRule rule) {
  Primitive p;
  p.name = std::move(name);
  p.shape_rule = std::move(rule);
  return p;
}

Primitive moves_data(Primitive p) {
  p.flop_count = FlopCount::none;
  return p;
}

Primitive reads_each_input_once(Primitive p) {
  p.flop_count = FlopCount::per_input_element;
  return p;
}

Primitive with_flop_rule(Primitive p, FlopRule rule) {
  p.flop_count = FlopCount::rule;
  p.flop_rule = std::move(rule);
  return p;
}

void fail(std::string_view prim, std::string_view msg) {
  throw TypeError(fmt::format("{}: {}", prim, msg));
}

void fail_got(std::string_view prim, std::string_view msg, Avals in) {
  throw TypeError(fmt::format("{}: {} (got {})", prim, msg, avals_str(in)));
}

std::string avals_str(Avals avals) {
  std::string out;
  for (size_t i = 0; i < avals.size(); ++i) {
    if (i) out += ", ";
    out += avals[i].str_short();
  }
  return out;
}

std::string ints_str(const std::vector<int64_t>& xs) {
  return shape_str(xs);
}

void expect_arity(std::string_view prim, Avals in, size_t n) {
  if (in.size() != n)
    fail_got(prim, fmt::format("expects {} operand{}, got {}", n, n == 1 ? "" : "s", in.size()),
             in);
}

void expect_min_arity(std::string_view prim, Avals in, size_t n) {
  if (in.size() < n)
    fail_got(prim,
             fmt::format("expects at least {} operand{}, got {}", n, n == 1 ? "" : "s", in.size()),
             in);
}

bool in_class(DType t, unsigned cls) {
  if (t == DType::opaque) return cls & kOpaque;
  if (t == DType::bool_) return cls & kBool;
  if (is_signed_integer(t)) return cls & kSigned;
  if (is_unsigned_integer(t)) return cls & kUnsigned;
  if (is_floating(t)) return cls & kFloat;
  return false;
}

void expect_dtype(std::string_view prim, Avals in, size_t i, unsigned cls) {
  DType t = in[i].dtype;
  if (in_class(t, cls)) return;
  std::string name = in[i].annotations && !in[i].annotations->dtype_text.empty()
                         ? in[i].annotations->dtype_text
                         : std::string(short_name(t));
  fail_got(prim, fmt::format("does not accept dtype {}", name), in);
}

bool all_weak(Avals in) {
  return std::all_of(in.begin(), in.end(), [](const ShapedArray& a) { return a.weak_type; });
}

const ParamValue& param(std::string_view prim, const Params& p, std::string_view key) {
  const ParamValue* v = p.find(key);
  if (!v) fail(prim, fmt::format("missing param '{}'", key));
  return *v;
}

namespace {
[[noreturn]] void wrong(std::string_view prim, std::string_view key, std::string_view want) {
  fail(prim, fmt::format("param '{}' is not {}", key, want));
}
}  // namespace

int64_t int_param(std::string_view prim, const Params& p, std::string_view key) {
  const ParamValue& v = param(prim, p, key);
  if (!v.is<int64_t>()) wrong(prim, key, "an int");
  return v.as<int64_t>();
}

bool bool_param(std::string_view prim, const Params& p, std::string_view key) {
  const ParamValue& v = param(prim, p, key);
  if (!v.is<bool>()) wrong(prim, key, "a bool");
  return v.as<bool>();
}

std::optional<std::vector<int64_t>> as_ints(const ParamValue& v) {
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (!items) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(items->size());
  for (const ParamValue& i : *items) {
    if (!i.is<int64_t>()) return std::nullopt;
    out.push_back(i.as<int64_t>());
  }
  return out;
}

std::optional<std::string_view> as_text(const ParamValue& v) {
  if (v.is<std::string>()) return std::string_view(v.as<std::string>());
  if (v.is<OpaqueParam>()) return std::string_view(v.as<OpaqueParam>().text);
  return std::nullopt;
}

std::vector<int64_t> ints_param(std::string_view prim, const Params& p, std::string_view key) {
  auto xs = as_ints(param(prim, p, key));
  if (!xs) wrong(prim, key, "a tuple of ints");
  return *xs;
}

std::optional<std::vector<int64_t>> opt_ints_param(std::string_view prim, const Params& p,
                                                   std::string_view key) {
  if (none_or_missing(p, key)) return std::nullopt;
  return ints_param(prim, p, key);
}

DType dtype_param(std::string_view prim, const Params& p, std::string_view key) {
  const ParamValue& v = param(prim, p, key);
  if (v.is<DType>()) return v.as<DType>();
  if (auto text = as_text(v))
    if (auto t = dtype_from_long_name(*text)) return *t;
  wrong(prim, key, "a dtype");
}

std::optional<DType> opt_dtype_param(std::string_view prim, const Params& p, std::string_view key) {
  if (none_or_missing(p, key)) return std::nullopt;
  return dtype_param(prim, p, key);
}

const Jaxpr& jaxpr_param(std::string_view prim, const Params& p, std::string_view key) {
  const ParamValue& v = param(prim, p, key);
  if (!v.is<JaxprRef>() || !v.as<JaxprRef>()) wrong(prim, key, "a jaxpr");
  return *v.as<JaxprRef>();
}

std::vector<const Jaxpr*> jaxprs_param(std::string_view prim, const Params& p,
                                       std::string_view key) {
  const ParamValue& v = param(prim, p, key);
  const std::vector<ParamValue>* items = nullptr;
  if (v.is<ParamTuple>()) items = &v.as<ParamTuple>().items;
  if (v.is<ParamList>()) items = &v.as<ParamList>().items;
  if (!items) wrong(prim, key, "a tuple of jaxprs");
  std::vector<const Jaxpr*> out;
  for (const ParamValue& i : *items) {
    if (!i.is<JaxprRef>() || !i.as<JaxprRef>()) wrong(prim, key, "a tuple of jaxprs");
    out.push_back(i.as<JaxprRef>().get());
  }
  return out;
}

bool none_or_missing(const Params& p, std::string_view key) {
  const ParamValue* v = p.find(key);
  return !v || v->is_none();
}

void check_axis(std::string_view prim, std::string_view what, int64_t axis, int64_t rank,
                Avals in) {
  if (axis < 0 || axis >= rank)
    fail_got(prim, fmt::format("{} {} out of range for rank {}", what, axis, rank), in);
}

AvalList jaxpr_in_avals(std::string_view prim, std::string_view what, const Jaxpr& j) {
  for (const Var& v : j.invars)
    if (!v) fail(prim, fmt::format("{} has a null variable", what));
  return j.in_avals();
}

AvalList jaxpr_out_avals(std::string_view prim, std::string_view what, const Jaxpr& j) {
  for (const Atom& a : j.outvars)
    if (a.is_var() && !a.var()) fail(prim, fmt::format("{} has a null variable", what));
  return j.out_avals();
}

void expect_types(std::string_view prim, std::string_view what, Avals expected, Avals got) {
  bool ok = expected.size() == got.size();
  for (size_t i = 0; ok && i < got.size(); ++i) ok = expected[i].same_type(got[i]);
  if (!ok)
    fail(prim,
         fmt::format("{} takes ({}) but is given ({})", what, avals_str(expected), avals_str(got)));
}

ParamPrintRule sorted_hiding_none(std::vector<std::string> keys) {
  return [keys = std::move(keys)](const Params& params) {
    std::vector<ParamRef> out = sorted_params(params);
    std::erase_if(out, [&](const ParamRef& r) {
      return r.value->is_none() && std::find(keys.begin(), keys.end(), r.key) != keys.end();
    });
    return out;
  };
}

ParamPrintRule sorted_hiding(std::vector<std::string> keys) {
  return [keys = std::move(keys)](const Params& params) {
    std::vector<ParamRef> out = sorted_params(params);
    std::erase_if(out, [&](const ParamRef& r) {
      return std::find(keys.begin(), keys.end(), r.key) != keys.end();
    });
    return out;
  };
}

ParamCanonicalizer add_missing(std::vector<std::pair<std::string, ParamValue>> defaults) {
  return [defaults = std::move(defaults)](Params& params) {
    for (const auto& [k, v] : defaults)
      if (!params.has(k)) params.set(k, v);
  };
}

ParamCanonicalizer drop(std::vector<std::string> keys) {
  return [keys = std::move(keys)](Params& params) {
    for (const auto& k : keys) params.erase(k);
  };
}

ParamCanonicalizer chain(std::vector<ParamCanonicalizer> steps) {
  return [steps = std::move(steps)](Params& params) {
    for (const auto& s : steps) s(params);
  };
}

}  // namespace cjax::rules
