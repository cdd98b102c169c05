// Facts a pass has established about a call body (a jit's, a scan's), kept by the body's identity
// so that another pass, or the same pass at another nesting level, need not walk it again. Bodies
// are immutable and shared (JaxprRef); an entry holds a weak_ptr, so a body that died and an
// address reused by a new body are told apart. Per thread, like the passes that use it.
#pragma once

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <utility>

#include "ir/params.h"

namespace cjax {

template <class Value>
class BodyMemo {
 public:
  // What was recorded for `body`, or null.
  const Value* find(const JaxprRef& body) const {
    auto it = entries_.find(body.get());
    if (it == entries_.end() || it->second.body.lock() != body) return nullptr;
    return &it->second.value;
  }
  void put(const JaxprRef& body, Value value) {
    if (entries_.size() >= sweep_at_) {  // forget dead bodies now and then
      std::erase_if(entries_, [](const auto& kv) { return kv.second.body.expired(); });
      sweep_at_ = std::max<size_t>(kMinSweep, 2 * entries_.size());
    }
    entries_[body.get()] = Entry{body, std::move(value)};
  }

 private:
  static constexpr size_t kMinSweep = 1024;
  struct Entry {
    std::weak_ptr<const Jaxpr> body;
    Value value;
  };
  std::unordered_map<const Jaxpr*, Entry> entries_;
  size_t sweep_at_ = kMinSweep;
};

}  // namespace cjax
