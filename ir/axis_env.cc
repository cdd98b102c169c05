#include "ir/axis_env.h"

#include <utility>
#include <vector>

namespace cjax {
namespace {

struct NamedAxis {
  std::string name;
  int64_t size;
};

std::vector<NamedAxis>& env() {
  thread_local std::vector<NamedAxis> axes;
  return axes;
}

}  // namespace

AxisEnvScope::AxisEnvScope(std::string name, int64_t size) {
  env().push_back({std::move(name), size});
}
AxisEnvScope::~AxisEnvScope() {
  env().pop_back();
}

std::optional<int64_t> bound_axis_size(std::string_view name) {
  const std::vector<NamedAxis>& axes = env();
  for (auto it = axes.rbegin(); it != axes.rend(); ++it)
    if (it->name == name) return it->size;
  return std::nullopt;
}

std::vector<std::string> axis_names_of(const ParamValue& axes) {
  std::vector<std::string> out;
  if (axes.is<std::string>()) out.push_back(axes.as<std::string>());
  if (axes.is<ParamTuple>())
    for (const ParamValue& a : axes.as<ParamTuple>().items)
      if (a.is<std::string>()) out.push_back(a.as<std::string>());
  return out;
}

std::string axis_env_key() {
  const auto count = static_cast<uint32_t>(env().size());
  std::string key(reinterpret_cast<const char*>(&count), sizeof count);
  for (const NamedAxis& a : env()) {
    key += a.name;
    key += '\0';
    key.append(reinterpret_cast<const char*>(&a.size), sizeof a.size);
  }
  return key;
}

}  // namespace cjax
