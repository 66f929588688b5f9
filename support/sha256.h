// SHA-256 as lowercase hex: the hash behind fusion fingerprints and config hashes.
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"

namespace tilesmith {

/// Lowercase hex SHA-256 of arbitrary bytes (64 characters, OpenSSL).
Expected<std::string> Sha256Hex(std::string_view bytes);

/// True when `text` looks like a SHA-256 in lowercase hex (64 of [0-9a-f]).
bool IsSha256Hex(std::string_view text);

}  // namespace tilesmith
