#include "service/store_pool.h"

#include "support/log.h"

namespace tilesmith::service {

StorePool::StorePool(Opener open, size_t capacity, db::Store& shared)
    : open_(std::move(open)), capacity_(capacity), shared_(shared) {}

StorePool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), store_(other.store_), owned_(std::move(other.owned_)) {
  other.pool_ = nullptr;
}

StorePool::Lease::~Lease() {
  if (pool_ != nullptr && owned_) pool_->GiveBack(std::move(owned_));
}

StorePool::Lease StorePool::Borrow() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<db::Store> store = std::move(idle_.back());
      idle_.pop_back();
      db::Store* borrowed = store.get();
      return Lease(this, borrowed, std::move(store));
    }
    if (!open_ || open_failed_ || opened_ >= capacity_) return Lease(this, &shared_, nullptr);
    ++opened_;  // counted now, so two borrowers never open past the capacity
  }
  Expected<std::unique_ptr<db::Store>> opened = open_();
  if (!opened) {
    std::lock_guard lock(mutex_);
    --opened_;
    if (!open_failed_) {
      TS_LOG(kWarning) << "batch queries share one database connection: " << opened.error().message;
    }
    open_failed_ = true;
    return Lease(this, &shared_, nullptr);
  }
  db::Store* borrowed = opened->get();
  return Lease(this, borrowed, std::move(*opened));
}

void StorePool::Fill() {
  std::vector<Lease> leases;  // all held at once, so each Borrow opens a new store
  for (size_t i = 0; i < capacity_; ++i) leases.push_back(Borrow());
}

size_t StorePool::opened() const {
  std::lock_guard lock(mutex_);
  return opened_;
}

void StorePool::GiveBack(std::unique_ptr<db::Store> store) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(store));
}

}  // namespace tilesmith::service
