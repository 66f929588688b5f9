// The one error type of tilesmith. Recoverable failures are values (`Expected<T>`), never
// exceptions across a library boundary.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace tilesmith {

/// What kind of failure an `Error` is; callers branch on this, humans read the message.
enum class ErrorCode {
  kInvalidArgument,     ///< The input is malformed or inconsistent (bad HLO, bad shape).
  kUnimplemented,       ///< Valid input we do not handle yet (names what).
  kNotFound,            ///< A named thing does not exist (file, computation, key).
  kOutOfRange,          ///< A value is outside what the type or limit allows.
  kFailedPrecondition,  ///< The environment is not as required (missing tool, bad state).
  kResourceExhausted,   ///< A size limit was hit (request, tensor, search space).
  kIo,                  ///< Reading or writing a file failed.
  kInternal,            ///< Our own invariant broke; a bug.
};

/// Short lowercase name of a code, e.g. "invalid argument".
std::string_view ErrorCodeName(ErrorCode code);

/// A failure: a code plus a message that names the location and what was expected,
/// e.g. `bad.hlo:3:17: error: unknown opcode 'tanhh'`.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  /// Returns a copy whose message is prefixed with `context: `.
  Error WithContext(std::string_view context) const;
};

template <typename T>
using Expected = std::expected<T, Error>;

/// Success or an error, for operations with no value.
using Status = std::expected<void, Error>;

/// Builds the error side of an `Expected`: `return MakeError(ErrorCode::kNotFound, "...")`.
inline std::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error{code, std::move(message)});
}

/// Shorthand for the most common error code.
inline std::unexpected<Error> InvalidArgument(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

inline std::unexpected<Error> Unimplemented(std::string message) {
  return MakeError(ErrorCode::kUnimplemented, std::move(message));
}

/// Success value for `Status`.
inline Status OkStatus() { return {}; }

}  // namespace tilesmith

#define TS_CONCAT_INNER(a, b) a##b
#define TS_CONCAT(a, b) TS_CONCAT_INNER(a, b)

/// Evaluates `expr` (an Expected or Status); on error returns the error from the caller.
#define TS_RETURN_IF_ERROR(expr)                                 \
  do {                                                           \
    auto&& ts_status_ = (expr);                                  \
    if (!ts_status_) return std::unexpected(ts_status_.error()); \
  } while (false)

/// `TS_ASSIGN_OR_RETURN(auto x, Foo());` binds the value or returns the error.
#define TS_ASSIGN_OR_RETURN(lhs, expr) \
  TS_ASSIGN_OR_RETURN_IMPL(TS_CONCAT(ts_result_, __LINE__), lhs, expr)
#define TS_ASSIGN_OR_RETURN_IMPL(result, lhs, expr)               \
  auto result = (expr);                                           \
  if (!result) return std::unexpected(std::move(result).error()); \
  lhs = std::move(*result)
