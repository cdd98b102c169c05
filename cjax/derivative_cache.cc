#include "cjax/derivative_cache.h"

#include <fmt/format.h>

#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cjax/jit_cache.h"
#include "ir/exact_text.h"

namespace cjax::detail {
namespace {

struct Entry {
  std::string key;
  std::shared_ptr<const void> value;
  std::vector<std::shared_ptr<const void>> pinned_policies;  // what the key names by identity
};

// Most recently used first.
struct Memo {
  std::mutex mu;
  std::list<Entry> order;
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index;
  size_t hits = 0, misses = 0;
};

Memo& memo() {
  static Memo* m = new Memo;  // never destroyed: programs may run during static destruction
  return *m;
}

}  // namespace

DerivativeCacheStats derivative_cache_stats() {
  Memo& m = memo();
  std::lock_guard lock(m.mu);
  return {m.hits, m.misses, m.order.size()};
}

void clear_derivative_cache() {
  Memo& m = memo();
  std::lock_guard lock(m.mu);
  m.index.clear();
  m.order.clear();
}

std::shared_ptr<const void> memoized_derivative_erased(
    std::string_view kind, const Jaxpr& f, std::string_view options,
    const std::function<std::shared_ptr<const void>()>& build) {
  std::vector<std::shared_ptr<const void>> policies;
  ExactTextWriter text(&policies);
  text.jaxpr(f, /*consts_are_inputs=*/true);
  if (!text.exact()) return build();
  std::string key = fmt::format("{}\n{}\n{}", kind, options, text.take());

  Memo& m = memo();
  {
    std::lock_guard lock(m.mu);
    if (auto it = m.index.find(key); it != m.index.end()) {
      ++m.hits;
      m.order.splice(m.order.begin(), m.order, it->second);
      return it->second->value;
    }
    ++m.misses;
  }
  // Built outside the lock: two threads missing together both build, and the first stored wins.
  log_trace(fmt::format("{}: differentiating", kind), f.in_avals());
  std::shared_ptr<const void> value = build();
  std::lock_guard lock(m.mu);
  if (auto it = m.index.find(key); it != m.index.end()) return it->second->value;
  m.order.push_front(Entry{std::move(key), value, std::move(policies)});
  m.index.emplace(m.order.front().key, m.order.begin());
  if (m.order.size() > kMaxCachedDerivatives) {
    m.index.erase(m.order.back().key);
    m.order.pop_back();
  }
  return value;
}

}  // namespace cjax::detail
