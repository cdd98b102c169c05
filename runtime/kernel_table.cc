// The kernel table: built on first use by calling each kernel file's registration function, then
// open to register_kernel. Reads take a shared lock.
#include "runtime/kernel_table.h"

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

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
    register_reduction_kernels(*this);
    register_cumulative_kernels(*this);
    register_sort_kernels(*this);
    register_dot_kernels(*this);
    register_identity_kernels(*this);
    register_control_flow_kernels(*this);
  }

  void add(std::string_view name, Kernel k, OutputMode mode) override {
    std::unique_lock lock(mu_);
    entries_[std::string(name)] = KernelEntry{k, mode == OutputMode::produced};
  }

  std::optional<KernelEntry> find(std::string_view name) const {
    std::shared_lock lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, KernelEntry, std::less<>> entries_;
};

Table& table() {
  static Table t;  // thread-safe lazy initialisation
  return t;
}

thread_local std::string_view t_current_primitive = "<none>";

}  // namespace

std::optional<KernelEntry> find_kernel(std::string_view prim_name) {
  return table().find(prim_name);
}

void register_kernel(std::string_view prim_name, Kernel k) {
  table().add(prim_name, k, OutputMode::preallocated);
}

bool has_kernel(std::string_view prim_name) {
  return table().find(prim_name).has_value();
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
