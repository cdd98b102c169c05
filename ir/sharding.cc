#include "ir/sharding.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "ir/errors.h"

namespace cjax {
namespace {

// A small reader of the Python reprs above: quoted names, ints, None, identifiers, punctuation.
class ReprReader {
 public:
  ReprReader(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("'{}'", c));
  }
  bool accept_word(std::string_view w) {
    skip_space();
    if (text_.substr(pos_, w.size()) != w) return false;
    const size_t end = pos_ + w.size();
    if (end < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      return false;
    pos_ = end;
    return true;
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("a quoted axis name");
    const char q = text_[pos_++];
    const size_t close = text_.find(q, pos_);
    if (close == std::string_view::npos) fail("the closing quote");
    std::string s(text_.substr(pos_, close - pos_));
    pos_ = close + 1;
    return s;
  }
  int64_t integer() {
    skip_space();
    size_t end = pos_;
    while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
    if (end == pos_ || end - pos_ > 18) fail("an axis size");
    const int64_t v = std::stoll(std::string(text_.substr(pos_, end - pos_)));
    pos_ = end;
    return v;
  }
  std::string identifier() {
    skip_space();
    size_t end = pos_;
    while (end < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      ++end;
    if (end == pos_) fail("an identifier");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end;
    return s;
  }
  void expect_end() {
    skip_space();
    if (pos_ != text_.size()) fail("the end of the text");
  }
  [[noreturn]] void fail(std::string_view expected) const {
    throw Error(fmt::format("{}: expected {} at offset {} of `{}`", what_, expected, pos_, text_));
  }

 private:
  std::string_view text_, what_;
  size_t pos_ = 0;
};

std::string quote(const std::string& name) {
  return "'" + name + "'";
}

PartitionSpec read_spec(ReprReader& r) {
  if (!r.accept_word("P") && !r.accept_word("PartitionSpec")) r.fail("P(...)");
  r.expect('(');
  PartitionSpec spec;
  while (!r.accept(')')) {
    if (r.accept_word("None")) {
      spec.dims.emplace_back();
    } else if (r.accept('(')) {
      std::vector<std::string> names;
      while (!r.accept(')')) {
        names.push_back(r.quoted());
        if (!r.accept(',') && !r.at(')')) r.fail("',' or ')'");
      }
      spec.dims.push_back(std::move(names));
    } else {
      spec.dims.push_back({r.quoted()});
    }
    if (!r.accept(',') && !r.at(')')) r.fail("',' or ')'");
  }
  return spec;
}

// The number of blocks dimension `d` of an array is cut into under `spec`.
int64_t blocks_along(const PartitionSpec& spec, size_t d, const MeshAxes& mesh,
                     std::string_view what) {
  int64_t n = 1;
  if (d < spec.dims.size())
    for (const std::string& a : spec.dims[d]) n *= mesh.size_of(a, what);
  return n;
}

void check_spec(const Shape& shape, const PartitionSpec& spec, const MeshAxes& mesh,
                std::string_view what) {
  if (spec.dims.size() > shape.size())
    throw Error(fmt::format("{}: the spec {} has {} entries, more than the rank {} of its array",
                            what, spec.repr(), spec.dims.size(), shape.size()));
  std::set<std::string> seen;
  for (const std::string& a : spec.axes()) {
    mesh.size_of(a, what);
    if (!seen.insert(a).second)
      throw Error(
          fmt::format("{}: the spec {} names the mesh axis '{}' twice", what, spec.repr(), a));
  }
}

}  // namespace

int64_t MeshAxes::device_count() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::optional<size_t> MeshAxes::find(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

int64_t MeshAxes::size_of(std::string_view name, std::string_view what) const {
  if (std::optional<size_t> i = find(name)) return sizes[*i];
  throw Error(fmt::format("{}: '{}' is not an axis of the mesh {}", what, name, repr()));
}

std::vector<int64_t> MeshAxes::coords(int64_t device) const {
  std::vector<int64_t> c(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    c[i] = device % sizes[i];
    device /= sizes[i];
  }
  return c;
}

std::string MeshAxes::repr() const {
  std::string s = "Mesh(";
  std::string types;
  for (size_t i = 0; i < names.size(); ++i) {
    s += fmt::format("{}: {}, ", quote(names[i]), sizes[i]);
    types += i ? ", Auto" : "Auto";
  }
  return s + "axis_types=(" + types + (names.size() == 1 ? ",))" : "))");
}

MeshAxes MeshAxes::parse(std::string_view text) {
  ReprReader r(text, "shard_map: mesh");
  if (!r.accept_word("Mesh")) r.fail("Mesh(...)");
  r.expect('(');
  MeshAxes mesh;
  while (!r.accept_word("axis_types")) {
    mesh.names.push_back(r.quoted());
    r.expect(':');
    mesh.sizes.push_back(r.integer());
    if (mesh.sizes.back() < 1) r.fail("a positive axis size");
    if (mesh.sizes.back() > kMaxMeshDevices || mesh.device_count() > kMaxMeshDevices)
      throw Error(
          fmt::format("shard_map: mesh: more than {} devices in `{}`", kMaxMeshDevices, text));
    r.expect(',');
  }
  r.expect('=');
  r.expect('(');
  size_t types = 0;
  while (!r.accept(')')) {
    const std::string t = r.identifier();
    if (t != "Auto" && t != "Explicit" && t != "Manual") r.fail("Auto, Explicit or Manual");
    ++types;
    if (!r.accept(',') && !r.at(')')) r.fail("',' or ')'");
  }
  if (types != mesh.names.size()) r.fail("one axis type per axis");
  r.expect(')');
  r.expect_end();
  return mesh;
}

std::vector<std::string> PartitionSpec::axes() const {
  std::vector<std::string> out;
  for (const auto& d : dims) out.insert(out.end(), d.begin(), d.end());
  return out;
}

std::string PartitionSpec::repr() const {
  std::string s = "P(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    if (dims[i].empty()) {
      s += "None";
    } else if (dims[i].size() == 1) {
      s += quote(dims[i][0]);
    } else {
      s += "(";
      for (size_t k = 0; k < dims[i].size(); ++k) s += (k ? ", " : "") + quote(dims[i][k]);
      s += ")";
    }
  }
  return s + (dims.size() == 1 ? ",)" : ")");
}

PartitionSpec PartitionSpec::parse(std::string_view text) {
  ReprReader r(text, "shard_map: partition spec");
  PartitionSpec spec = read_spec(r);
  r.expect_end();
  return spec;
}

ParamValue specs_param(const std::vector<PartitionSpec>& specs) {
  if (specs.empty()) return ParamTuple{};
  std::string s = "(";
  for (size_t i = 0; i < specs.size(); ++i) s += (i ? ", " : "") + specs[i].repr();
  return OpaqueParam{s + (specs.size() == 1 ? ",)" : ")")};
}

std::vector<PartitionSpec> specs_from_param(const ParamValue& v, std::string_view key) {
  if (v.is<ParamTuple>() && v.as<ParamTuple>().items.empty()) return {};
  if (!v.is<OpaqueParam>())
    throw Error(fmt::format("shard_map: param '{}' must be a tuple of partition specs", key));
  ReprReader r(v.as<OpaqueParam>().text, fmt::format("shard_map: {}", key));
  r.expect('(');
  std::vector<PartitionSpec> specs;
  while (!r.accept(')')) {
    specs.push_back(read_spec(r));
    if (!r.accept(',') && !r.at(')')) r.fail("',' or ')'");
  }
  r.expect_end();
  return specs;
}

ParamValue mesh_param(const MeshAxes& mesh) {
  return OpaqueParam{mesh.repr()};
}

MeshAxes mesh_from_param(const ParamValue& v) {
  if (!v.is<OpaqueParam>()) throw Error("shard_map: param 'mesh' must be a Mesh(...)");
  return MeshAxes::parse(v.as<OpaqueParam>().text);
}

ParamValue manual_axes_param(const MeshAxes& mesh) {
  std::string s = "frozenset({";
  for (size_t i = 0; i < mesh.names.size(); ++i) s += (i ? ", " : "") + quote(mesh.names[i]);
  return OpaqueParam{s + "})"};
}

Shape local_shape(const Shape& global, const PartitionSpec& spec, const MeshAxes& mesh,
                  std::string_view what) {
  check_spec(global, spec, mesh, what);
  Shape local = global;
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    const int64_t n = blocks_along(spec, d, mesh, what);
    if (global[d] % n != 0)
      throw Error(
          fmt::format("{}: dimension {} of an array of shape {} (size {}) does not divide "
                      "into the {} blocks the spec {} asks for",
                      what, d, shape_str(global), global[d], n, spec.repr()));
    local[d] = global[d] / n;
  }
  return local;
}

Shape global_shape(const Shape& local, const PartitionSpec& spec, const MeshAxes& mesh,
                   std::string_view what) {
  check_spec(local, spec, mesh, what);
  Shape global = local;
  for (size_t d = 0; d < spec.dims.size(); ++d)
    if (__builtin_mul_overflow(global[d], blocks_along(spec, d, mesh, what), &global[d]))
      throw Error(fmt::format("{}: dimension {} of the whole array overflows", what, d));
  return global;
}

std::vector<int64_t> block_start(const Shape& local, const PartitionSpec& spec,
                                 const MeshAxes& mesh, int64_t device) {
  const std::vector<int64_t> coords = mesh.coords(device);
  std::vector<int64_t> start(local.size(), 0);
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    int64_t block = 0;
    for (const std::string& a : spec.dims[d]) {
      const size_t i = *mesh.find(a);
      block = block * mesh.sizes[i] + coords[i];
    }
    start[d] = block * local[d];
  }
  return start;
}

}  // namespace cjax
