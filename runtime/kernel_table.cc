// The kernel table: built on first use by calling each kernel file's registration function, then
// open to register_kernel. A built-in primitive's kernel is kept by the primitive (its index in
// the table); the kernels of other primitives (a plugin's, an opaque one's) by name. Reads take a
// shared lock.
#include "runtime/kernel_table.h"

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "ir/rules/per_primitive.h"
#include "runtime/kernels/kernel_util.h"

namespace cjax::runtime {
namespace {

class Table final : public KernelRegistry {
 public:
  Table() {
    register_unary_kernels(*this);
    register_binary_kernels(*this);
    register_select_kernels(*this);
    register_convert_kernels(*this);
    register_shape_kernels(*this);
    register_slicing_kernels(*this);
    register_gather_scatter_kernels(*this);
    register_reduction_kernels(*this);
    register_cumulative_kernels(*this);
    register_sort_kernels(*this);
    register_dot_kernels(*this);
    register_identity_kernels(*this);
    register_control_flow_kernels(*this);
    register_random_kernels(*this);
    register_collective_kernels(*this);
  }

  void add(std::string_view name, Kernel k, OutputMode mode) override {
    std::unique_lock lock(mu_);
    const KernelEntry entry{k, mode == OutputMode::produced};
    if (find_primitive(name))
      builtin_.define(name) = entry;
    else
      by_name_[std::string(name)] = entry;
  }

  std::optional<KernelEntry> find(const Primitive& prim) const {
    std::shared_lock lock(mu_);
    if (const KernelEntry* e = builtin_.find(prim))
      return e->kernel ? std::optional<KernelEntry>(*e) : std::nullopt;
    return other(prim.name);
  }

  // The kernel of a primitive that is not built in (a plugin's, an opaque one's).
  std::optional<KernelEntry> find_other(std::string_view name) const {
    std::shared_lock lock(mu_);
    return other(name);
  }

 private:
  std::optional<KernelEntry> other(std::string_view name) const {  // with mu_ held
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }

  mutable std::shared_mutex mu_;
  PerPrimitive<KernelEntry> builtin_;
  std::map<std::string, KernelEntry, std::less<>> by_name_;
};

Table& table() {
  static Table t;  // thread-safe lazy initialisation
  return t;
}

thread_local std::string_view t_current_primitive = "<none>";

}  // namespace

std::optional<KernelEntry> find_kernel(const Primitive& prim) {
  return table().find(prim);
}

void register_kernel(std::string_view prim_name, Kernel k) {
  table().add(prim_name, k, OutputMode::preallocated);
}

bool has_kernel(std::string_view prim_name) {
  const Primitive* builtin = find_primitive(prim_name);
  return (builtin ? table().find(*builtin) : table().find_other(prim_name)).has_value();
}

std::string_view current_primitive() {
  return t_current_primitive;
}

CurrentPrimitiveScope::CurrentPrimitiveScope(std::string_view name) : saved_(t_current_primitive) {
  t_current_primitive = name;
}
CurrentPrimitiveScope::~CurrentPrimitiveScope() {
  t_current_primitive = saved_;
}

}  // namespace cjax::runtime
