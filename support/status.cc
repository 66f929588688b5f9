#include "support/status.h"

namespace tilesmith {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kUnimplemented:
      return "unimplemented";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kOutOfRange:
      return "out of range";
    case ErrorCode::kFailedPrecondition:
      return "failed precondition";
    case ErrorCode::kResourceExhausted:
      return "resource exhausted";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

Error Error::WithContext(std::string_view context) const {
  return Error{code, std::string(context) + ": " + message};
}

}  // namespace tilesmith
