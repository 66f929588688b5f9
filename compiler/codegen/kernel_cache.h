// An in-memory cache of compiled kernels keyed by (fusion fingerprint, config, target):
// the same candidate asked for twice — by a command, the tuner or the service — is compiled
// once. Least recently used entries go first; all operations are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "compiler/emitters/kernel_ir.h"
#include "compiler/emitters/target.h"
#include "support/status.h"

namespace tilesmith::codegen {

/// What identifies a compiled kernel.
struct KernelKey {
  std::string fingerprint;  // SHA-256 of the fusion's canonical text
  std::string config;       // the emitter and its resolved config (defaults filled in)
  std::string target;       // `cuda:sm_90`, `host`

  /// The key of `kernel` (emitted from `fusion`) compiled for `target`.
  static Expected<KernelKey> For(const hlo::HloComputation& fusion,
                                 const emitters::KernelIR& kernel, const emitters::Target& target);
  std::string ToString() const { return fingerprint + "|" + config + "|" + target; }
  friend bool operator==(const KernelKey&, const KernelKey&) = default;
};

/// Hash of a KernelKey for unordered containers.
struct KernelKeyHash {
  size_t operator()(const KernelKey& key) const { return std::hash<std::string>()(key.ToString()); }
};

/// Counters of a cache since it was made.
struct KernelCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t evictions = 0;
  size_t size = 0;
};

/// A bounded LRU map from KernelKey to an immutable compiled kernel. Values are shared:
/// an entry evicted while in use stays alive for its users. A value must not point into the
/// fusion it was compiled from (the next user's fusion is another object).
template <typename Value>
class KernelCache {
 public:
  explicit KernelCache(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  /// The entry for `key` (now the most recently used), or null; counts a hit or a miss.
  std::shared_ptr<const Value> Find(const KernelKey& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++stats_.misses;
      return nullptr;
    }
    ++stats_.hits;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// Adds or replaces the entry for `key`, evicting the least recently used beyond capacity.
  void Insert(const KernelKey& key, std::shared_ptr<const Value> value) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++stats_.evictions;
    }
  }

  /// The entry for `key`, or what `compile()` returns (an `Expected<Value>` or an
  /// `Expected<std::unique_ptr<Value>>`) inserted. Errors are returned, not cached. Two
  /// threads missing the same key at once both compile; the later insert wins.
  template <typename Compile>
  Expected<std::shared_ptr<const Value>> GetOrCompile(const KernelKey& key, Compile&& compile) {
    if (std::shared_ptr<const Value> found = Find(key)) return found;
    auto compiled = std::forward<Compile>(compile)();
    if (!compiled) return std::unexpected(compiled.error());
    std::shared_ptr<const Value> value;
    if constexpr (std::is_same_v<std::decay_t<decltype(*compiled)>, std::unique_ptr<Value>>) {
      value = std::move(*compiled);
    } else {
      value = std::make_shared<const Value>(std::move(*compiled));
    }
    Insert(key, value);
    return value;
  }

  KernelCacheStats stats() const {
    std::lock_guard lock(mutex_);
    KernelCacheStats stats = stats_;
    stats.size = order_.size();
    return stats;
  }

  void Clear() {
    std::lock_guard lock(mutex_);
    index_.clear();
    order_.clear();
  }

 private:
  using Entry = std::pair<KernelKey, std::shared_ptr<const Value>>;
  mutable std::mutex mutex_;
  size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<KernelKey, typename std::list<Entry>::iterator, KernelKeyHash> index_;
  KernelCacheStats stats_;
};

class HostKernel;
struct NvptxKernel;

/// The process-wide caches that commands, the tuner and the service share. A cached
/// HostKernel still holds its Kernel IR, whose `fusion` and function pointers refer to the
/// fusion it was first compiled from: users of a cache hit read only its buffers, launch,
/// config, stats, and Run it.
KernelCache<HostKernel>& HostKernelCache();
KernelCache<NvptxKernel>& NvptxKernelCache();

}  // namespace tilesmith::codegen
