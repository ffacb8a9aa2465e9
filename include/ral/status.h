// Status and StatusOr<T>: how every fallible RAL function reports failure.
//
// An OK Status is a single null pointer, so returning success costs nothing; the error state
// (code + message) lives on the heap and is only built on the failure path.
#ifndef RAL_STATUS_H_
#define RAL_STATUS_H_

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ral {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kInvalidArgument = 2,
  kDeadlineExceeded = 3,
  kNotFound = 4,
  kAlreadyExists = 5,
  kFailedPrecondition = 6,
  kOutOfRange = 7,
  kUnsupported = 8,
  kInternal = 9,
  kUnavailable = 10,
  kDataLoss = 11,
  kOutOfMemory = 12,
  kAborted = 13,
};

// "INVALID_ARGUMENT", "NOT_FOUND", ...
const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  // Empty for OK.
  std::string_view message() const {
    return ok() ? std::string_view() : std::string_view(state_->message);
  }
  // "NOT_FOUND: no such api ..." or "OK".
  std::string toString() const;

  // Returns a copy whose message is prefixed with `context` ("context: message"). OK stays OK.
  Status withContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }
  friend bool operator!=(const Status& a, const Status& b) { return !(a == b); }

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;
};

inline Status okStatus() { return Status(); }
std::ostream& operator<<(std::ostream& os, const Status& s);

namespace internal {
template <typename... Args>
std::string strCat(const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::string();
  } else {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
  }
}
}  // namespace internal

// Builders: `return ral::invalidArgument("rank ", r, " != ", n);`
#define RAL_DEFINE_STATUS_BUILDER(fn, code)                            \
  template <typename... Args>                                          \
  Status fn(const Args&... args) {                                     \
    return Status(StatusCode::code, ::ral::internal::strCat(args...)); \
  }
RAL_DEFINE_STATUS_BUILDER(cancelled, kCancelled)
RAL_DEFINE_STATUS_BUILDER(invalidArgument, kInvalidArgument)
RAL_DEFINE_STATUS_BUILDER(deadlineExceeded, kDeadlineExceeded)
RAL_DEFINE_STATUS_BUILDER(notFound, kNotFound)
RAL_DEFINE_STATUS_BUILDER(alreadyExists, kAlreadyExists)
RAL_DEFINE_STATUS_BUILDER(failedPrecondition, kFailedPrecondition)
RAL_DEFINE_STATUS_BUILDER(outOfRange, kOutOfRange)
RAL_DEFINE_STATUS_BUILDER(unsupported, kUnsupported)
RAL_DEFINE_STATUS_BUILDER(internalError, kInternal)
RAL_DEFINE_STATUS_BUILDER(unavailable, kUnavailable)
RAL_DEFINE_STATUS_BUILDER(dataLoss, kDataLoss)
RAL_DEFINE_STATUS_BUILDER(outOfMemory, kOutOfMemory)
RAL_DEFINE_STATUS_BUILDER(aborted, kAborted)
#undef RAL_DEFINE_STATUS_BUILDER

namespace internal {
// Reading the value of a failed StatusOr is a caller bug (like dereferencing an empty optional);
// it is reported with the status that was ignored, then the process stops.
[[noreturn]] void statusOrValueOfError(const Status& status);
}  // namespace internal

// Either a value of T or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "StatusOr<Status> is meaningless");

 public:
  // An error. Passing an OK status is a bug and becomes an INTERNAL error.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = internalError("StatusOr constructed from an OK Status");
  }
  template <typename U = T,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, StatusOr<T>>>>
  StatusOr(U&& value) : value_(std::forward<U>(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & {
    check();
    return *value_;
  }
  const T& value() const& {
    check();
    return *value_;
  }
  T&& value() && {
    check();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void check() const {
    if (!status_.ok()) internal::statusOrValueOfError(status_);
  }
  Status status_;
  std::optional<T> value_;
};

namespace internal {
inline const Status& asStatus(const Status& s) { return s; }
template <typename T>
const Status& asStatus(const StatusOr<T>& s) {
  return s.status();
}
}  // namespace internal

}  // namespace ral

#define RAL_STATUS_CONCAT_INNER_(a, b) a##b
#define RAL_STATUS_CONCAT_(a, b) RAL_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` (a Status or StatusOr) from the enclosing function when not OK.
#define RAL_RETURN_IF_ERROR(expr)                                      \
  do {                                                                 \
    const auto& ral_status_or_ = (expr);                               \
    if (!::ral::internal::asStatus(ral_status_or_).ok())               \
      return ::ral::Status(::ral::internal::asStatus(ral_status_or_)); \
  } while (0)

// `RAL_ASSIGN_OR_RETURN(auto x, makeX());` declares/assigns x or returns the error.
#define RAL_ASSIGN_OR_RETURN(lhs, expr) \
  RAL_ASSIGN_OR_RETURN_IMPL_(RAL_STATUS_CONCAT_(ral_statusor_, __LINE__), lhs, expr)
#define RAL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

#endif  // RAL_STATUS_H_
