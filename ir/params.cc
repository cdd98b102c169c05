#include "ir/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ir/errors.h"

namespace cjax {

ParamValue ParamValue::ints(const std::vector<int64_t>& xs) {
  ParamTuple t;
  for (int64_t x : xs) t.items.emplace_back(x);
  return t;
}

ParamValue ParamValue::int_list(const std::vector<int64_t>& xs) {
  ParamList l;
  for (int64_t x : xs) l.items.emplace_back(x);
  return l;
}

ParamValue ParamValue::bools(const std::vector<bool>& xs) {
  ParamTuple t;
  for (bool x : xs) t.items.emplace_back(x);
  return t;
}

ParamValue ParamValue::np_int(int64_t i) {
  ParamValue v(i);
  v.numpy_int = true;
  return v;
}

ParamValue ParamValue::np_ints(const std::vector<int64_t>& xs) {
  ParamTuple t;
  for (int64_t x : xs) t.items.push_back(np_int(x));
  return ParamValue(std::move(t));
}

std::vector<int64_t> ParamValue::to_ints() const {
  const std::vector<ParamValue>* items = nullptr;
  if (is<ParamTuple>()) items = &as<ParamTuple>().items;
  if (is<ParamList>()) items = &as<ParamList>().items;
  if (!items) throw Error("param is not a sequence of ints");
  std::vector<int64_t> out;
  for (const auto& i : *items) {
    if (!i.is<int64_t>()) throw Error("param is not a sequence of ints");
    out.push_back(i.as<int64_t>());
  }
  return out;
}

namespace {

bool items_equal(const std::vector<ParamValue>& a, const std::vector<ParamValue>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

bool ParamValue::operator==(const ParamValue& o) const {
  if (v.index() != o.v.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(o.v);
        if constexpr (std::is_same_v<T, ParamTuple> || std::is_same_v<T, ParamList>)
          return items_equal(x.items, y.items);
        else if constexpr (std::is_same_v<T, OpaqueParam>)
          return x.text == y.text;
        else if constexpr (std::is_same_v<T, double>)
          return std::memcmp(&x, &y, sizeof x) == 0;
        else
          return x == y;
      },
      v);
}

bool Params::operator==(const Params& o) const {
  if (size() != o.size()) return false;
  for (const auto& [k, v] : items_) {
    const ParamValue* other = o.find(k);
    if (!other || !(*other == v)) return false;
  }
  return true;
}

Params::Params(std::initializer_list<std::pair<std::string, ParamValue>> init) {
  for (const auto& [k, v] : init) set(k, v);
}

void Params::set(std::string key, ParamValue value) {
  for (auto& [k, v] : items_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  items_.emplace_back(std::move(key), std::move(value));
}

const ParamValue* Params::find(std::string_view key) const {
  for (const auto& [k, v] : items_)
    if (k == key) return &v;
  return nullptr;
}

bool Params::erase(std::string_view key) {
  auto it = std::find_if(items_.begin(), items_.end(), [&](auto& kv) { return kv.first == key; });
  if (it == items_.end()) return false;
  items_.erase(it);
  return true;
}

const ParamValue& Params::at(std::string_view key) const {
  const ParamValue* v = find(key);
  if (!v) throw Error(fmt::format("missing param '{}'", key));
  return *v;
}

namespace {
[[noreturn]] void wrong_type(std::string_view key, const char* want) {
  throw Error(fmt::format("param '{}' is not {}", key, want));
}
}  // namespace

int64_t Params::get_int(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is<int64_t>()) wrong_type(key, "an int");
  return v.as<int64_t>();
}

bool Params::get_bool(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is<bool>()) wrong_type(key, "a bool");
  return v.as<bool>();
}

double Params::get_float(std::string_view key) const {
  const auto& v = at(key);
  if (v.is<double>()) return v.as<double>();
  if (v.is<int64_t>()) return static_cast<double>(v.as<int64_t>());
  wrong_type(key, "a number");
}

const std::string& Params::get_string(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is<std::string>()) wrong_type(key, "a string");
  return v.as<std::string>();
}

DType Params::get_dtype(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is<DType>()) wrong_type(key, "a dtype");
  return v.as<DType>();
}

std::vector<int64_t> Params::get_ints(std::string_view key) const {
  const auto& v = at(key);
  try {
    return v.to_ints();
  } catch (const Error&) {
    wrong_type(key, "a sequence of ints");
  }
}

const JaxprRef& Params::get_jaxpr(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is<JaxprRef>()) wrong_type(key, "a jaxpr");
  return v.as<JaxprRef>();
}

ParamValue DotDimensionNumbers::to_param() const {
  return ParamTuple{
      {ParamTuple{{ParamValue::int_list(lhs_contract), ParamValue::int_list(rhs_contract)}},
       ParamTuple{{ParamValue::int_list(lhs_batch), ParamValue::int_list(rhs_batch)}}}};
}

DotDimensionNumbers DotDimensionNumbers::from_param(const ParamValue& v) {
  auto pair = [](const ParamValue& p) -> const std::vector<ParamValue>& {
    if (!p.is<ParamTuple>() || p.as<ParamTuple>().items.size() != 2)
      throw Error(
          "dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))");
    return p.as<ParamTuple>().items;
  };
  const auto& outer = pair(v);
  const auto& contract = pair(outer[0]);
  const auto& batch = pair(outer[1]);
  return {contract[0].to_ints(), contract[1].to_ints(), batch[0].to_ints(), batch[1].to_ints()};
}

}  // namespace cjax
