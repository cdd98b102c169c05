#include "ir/gather_params.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string>

#include "ir/errors.h"

namespace cjax {
namespace {

constexpr std::string_view kModePrefix = "GatherScatterMode.";

// Python's tuple syntax: (), (1,), (0, 2); entries from `numpy_from` on as numpy ints.
std::string tuple_text(const std::vector<int64_t>& v, int numpy_from) {
  std::vector<std::string> items;
  for (size_t i = 0; i < v.size(); ++i)
    items.push_back(numpy_from >= 0 && static_cast<int>(i) >= numpy_from
                        ? fmt::format("np.int64({})", v[i])
                        : fmt::format("{}", v[i]));
  if (items.size() == 1) return fmt::format("({},)", items[0]);
  return fmt::format("({})", fmt::join(items, ", "));
}

struct Field {
  std::vector<int64_t> ints;
  int numpy_from = -1;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// `Name(field=(ints), ...)` as its fields; throws cjax::Error naming `name` when malformed.
std::map<std::string, Field, std::less<>> named_tuple(const ParamValue& v, std::string_view name) {
  auto fail = [&](std::string_view why) -> Error {
    return Error(fmt::format("{} expected as {}(field=(ints), ...): {}", name, name, why));
  };
  if (!v.is<OpaqueParam>()) throw fail("not a value of that type");
  std::string_view text = trim(v.as<OpaqueParam>().text);
  if (text.substr(0, name.size()) != name || text.size() < name.size() + 2 ||
      text[name.size()] != '(' || text.back() != ')')
    throw fail(fmt::format("'{}'", text));
  std::string_view body = text.substr(name.size() + 1, text.size() - name.size() - 2);
  std::map<std::string, Field, std::less<>> fields;
  while (!trim(body).empty()) {
    body = trim(body);
    const size_t eq = body.find('=');
    if (eq == std::string_view::npos || eq + 1 >= body.size() || body[eq + 1] != '(')
      throw fail(fmt::format("'{}'", body));
    const std::string key(trim(body.substr(0, eq)));
    Field f;
    // A numpy int's closing parenthesis is not the tuple's.
    size_t end = eq + 2;
    for (int depth = 1; end < body.size() && depth > 0; ++end)
      depth += body[end] == '(' ? 1 : body[end] == ')' ? -1 : 0;
    if (end > body.size() || body[end - 1] != ')') throw fail("an unclosed tuple");
    const size_t close_at = end - 1;
    std::string_view items = body.substr(eq + 2, close_at - eq - 2);
    while (!trim(items).empty()) {
      const size_t comma = std::min(items.find(','), items.size());
      std::string_view item = trim(items.substr(0, comma));
      constexpr std::string_view kNumpy = "np.int64(";
      if (item.substr(0, kNumpy.size()) == kNumpy && item.back() == ')') {
        if (f.numpy_from < 0) f.numpy_from = static_cast<int>(f.ints.size());
        item = item.substr(kNumpy.size(), item.size() - kNumpy.size() - 1);
      }
      int64_t x = 0;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
      if (ec != std::errc() || end != item.data() + item.size())
        throw fail(fmt::format("'{}' in {} is not an integer", item, key));
      f.ints.push_back(x);
      items = comma < items.size() ? items.substr(comma + 1) : std::string_view();
    }
    if (!fields.emplace(key, std::move(f)).second) throw fail(key + " given twice");
    body = body.substr(close_at + 1);
    body = trim(body);
    if (!body.empty()) {
      if (body.front() != ',') throw fail(fmt::format("'{}'", body));
      body.remove_prefix(1);
    }
  }
  return fields;
}

using Fields = std::map<std::string, Field, std::less<>>;

// The field `key` (absent: empty, for the batching dims older JAX did not have when
// `optional`); its numpy entries noted in `numpy_from`.
std::vector<int64_t> field(const Fields& f, std::string_view name, std::string_view key,
                           bool optional, int& numpy_from) {
  if (auto it = f.find(key); it != f.end()) {
    numpy_from = it->second.numpy_from;
    return it->second.ints;
  }
  if (optional) return {};
  throw Error(fmt::format("{} lacks its field {}", name, key));
}

void check_fields(const Fields& f, std::string_view name,
                  std::initializer_list<std::string_view> known) {
  for (const auto& [key, _] : f)
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw Error(fmt::format("{} has no field {}", name, key));
}

}  // namespace

ParamValue GatherDimensionNumbers::to_param() const {
  const NumpyFrom& n = numpy_from;
  return OpaqueParam{fmt::format(
      "GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, start_index_map={}, "
      "operand_batching_dims={}, start_indices_batching_dims={})",
      tuple_text(offset_dims, n[0]), tuple_text(collapsed_slice_dims, n[1]),
      tuple_text(start_index_map, n[2]), tuple_text(operand_batching_dims, n[3]),
      tuple_text(start_indices_batching_dims, n[4]))};
}

GatherDimensionNumbers GatherDimensionNumbers::from_param(const ParamValue& v) {
  constexpr std::string_view kName = "GatherDimensionNumbers";
  const auto f = named_tuple(v, kName);
  check_fields(f, kName,
               {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
                "start_indices_batching_dims"});
  GatherDimensionNumbers dn;
  NumpyFrom& n = dn.numpy_from;
  dn.offset_dims = field(f, kName, "offset_dims", false, n[0]);
  dn.collapsed_slice_dims = field(f, kName, "collapsed_slice_dims", false, n[1]);
  dn.start_index_map = field(f, kName, "start_index_map", false, n[2]);
  dn.operand_batching_dims = field(f, kName, "operand_batching_dims", true, n[3]);
  dn.start_indices_batching_dims = field(f, kName, "start_indices_batching_dims", true, n[4]);
  return dn;
}

ParamValue ScatterDimensionNumbers::to_param() const {
  const NumpyFrom& n = numpy_from;
  return OpaqueParam{fmt::format(
      "ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, "
      "scatter_dims_to_operand_dims={}, operand_batching_dims={}, "
      "scatter_indices_batching_dims={})",
      tuple_text(update_window_dims, n[0]), tuple_text(inserted_window_dims, n[1]),
      tuple_text(scatter_dims_to_operand_dims, n[2]), tuple_text(operand_batching_dims, n[3]),
      tuple_text(scatter_indices_batching_dims, n[4]))};
}

ScatterDimensionNumbers ScatterDimensionNumbers::from_param(const ParamValue& v) {
  constexpr std::string_view kName = "ScatterDimensionNumbers";
  const auto f = named_tuple(v, kName);
  check_fields(f, kName,
               {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                "operand_batching_dims", "scatter_indices_batching_dims"});
  ScatterDimensionNumbers dn;
  NumpyFrom& n = dn.numpy_from;
  dn.update_window_dims = field(f, kName, "update_window_dims", false, n[0]);
  dn.inserted_window_dims = field(f, kName, "inserted_window_dims", false, n[1]);
  dn.scatter_dims_to_operand_dims = field(f, kName, "scatter_dims_to_operand_dims", false, n[2]);
  dn.operand_batching_dims = field(f, kName, "operand_batching_dims", true, n[3]);
  dn.scatter_indices_batching_dims = field(f, kName, "scatter_indices_batching_dims", true, n[4]);
  return dn;
}

ParamValue to_param(GatherScatterMode mode) {
  switch (mode) {
    case GatherScatterMode::clip:
      return OpaqueParam{"GatherScatterMode.CLIP"};
    case GatherScatterMode::fill_or_drop:
      return OpaqueParam{"GatherScatterMode.FILL_OR_DROP"};
    case GatherScatterMode::promise_in_bounds:
      break;
  }
  return OpaqueParam{"GatherScatterMode.PROMISE_IN_BOUNDS"};
}

GatherScatterMode gather_scatter_mode(const ParamValue& v) {
  std::string_view text;
  if (v.is<OpaqueParam>()) text = trim(v.as<OpaqueParam>().text);
  if (v.is<std::string>()) text = v.as<std::string>();
  if (text.substr(0, kModePrefix.size()) == kModePrefix) text.remove_prefix(kModePrefix.size());
  if (text == "CLIP" || text == "clip") return GatherScatterMode::clip;
  if (text == "FILL_OR_DROP" || text == "fill" || text == "drop")
    return GatherScatterMode::fill_or_drop;
  if (text == "PROMISE_IN_BOUNDS" || text == "promise_in_bounds")
    return GatherScatterMode::promise_in_bounds;
  throw Error(fmt::format(
      "mode must be GatherScatterMode.CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS, got '{}'", text));
}

bool opaque_text_is_exact(std::string_view text) {
  text = trim(text);
  for (std::string_view exact : {std::string_view("GatherDimensionNumbers("),
                                 std::string_view("ScatterDimensionNumbers("), kModePrefix})
    if (text.substr(0, exact.size()) == exact) return true;
  return false;
}

namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

WindowDims split_dims(const std::vector<int64_t>& window, const std::vector<int64_t>& removed,
                      const std::vector<int64_t>& operand_batching, int64_t operand_rank,
                      int64_t rank) {
  WindowDims w;
  for (int64_t d = 0; d < rank; ++d)
    if (!contains(window, d)) w.batch_dims.push_back(d);
  for (int64_t d = 0; d < operand_rank; ++d)
    if (!contains(removed, d) && !contains(operand_batching, d)) w.operand_window_dims.push_back(d);
  return w;
}

}  // namespace

WindowDims window_dims(const GatherDimensionNumbers& dn, int64_t operand_rank, int64_t out_rank) {
  return split_dims(dn.offset_dims, dn.collapsed_slice_dims, dn.operand_batching_dims, operand_rank,
                    out_rank);
}

WindowDims window_dims(const ScatterDimensionNumbers& dn, int64_t operand_rank,
                       int64_t updates_rank) {
  return split_dims(dn.update_window_dims, dn.inserted_window_dims, dn.operand_batching_dims,
                    operand_rank, updates_rank);
}

}  // namespace cjax
