// Read connections for the batch route. A store serialises its callers on one connection, so
// chunks of a /v1/query:batch that shared the API's store would queue for it (and wait out a
// holder the OS has preempted); each chunk borrows a store of its own instead, and the batch
// pool's threads read side by side (WAL readers do not wait on each other).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "db/store.h"
#include "support/status.h"

namespace tilesmith::service {

/// Stores opened on demand, at most `capacity`, each lent to one borrower at a time.
class StorePool {
 public:
  /// Opens one more read store (a connection to the same database).
  using Opener = std::function<Expected<std::unique_ptr<db::Store>>()>;

  /// `shared` answers when the pool has no opener, all `capacity` stores are lent, or an open
  /// fails (logged once); it must outlive the pool.
  StorePool(Opener open, size_t capacity, db::Store& shared);

  /// A borrowed store, given back when the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    db::Store& store() const { return *store_; }

   private:
    friend class StorePool;
    Lease(StorePool* pool, db::Store* store, std::unique_ptr<db::Store> owned)
        : pool_(pool), store_(store), owned_(std::move(owned)) {}
    StorePool* pool_;
    db::Store* store_;
    std::unique_ptr<db::Store> owned_;  ///< null when `store_` is the shared store
  };

  /// An idle store, a newly opened one, or the shared store.
  Lease Borrow();

  /// Opens the stores not opened yet, up to the capacity, and keeps them idle: a server
  /// fills its pool when it starts, so that its first batch does not wait for the opens.
  void Fill();

  /// Stores opened so far (lent or idle).
  size_t opened() const;

 private:
  void GiveBack(std::unique_ptr<db::Store> store);

  Opener open_;
  size_t capacity_;
  db::Store& shared_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<db::Store>> idle_;
  size_t opened_ = 0;
  bool open_failed_ = false;
};

}  // namespace tilesmith::service
