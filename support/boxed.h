// `Boxed<T>`: an optional value kept on the heap. It reads like `std::optional<T>` but
// costs one pointer when empty, for large fields that most objects never set.
#pragma once

#include <memory>
#include <utility>

namespace tilesmith {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: like optional
  Boxed(const Boxed& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    value_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T value_or(T fallback) const { return has_value() ? *value_ : std::move(fallback); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a.has_value() || *a == *b;
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace tilesmith
