#include "support/sha256.h"

#include <openssl/evp.h>

namespace tilesmith {

Expected<std::string> Sha256Hex(std::string_view bytes) {
  // Fetched once and kept for the life of the process: EVP_sha256() has OpenSSL 3 look the
  // implementation up on every digest, about a third of the time of a short text's digest.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (kSha256 == nullptr ||
      EVP_Digest(bytes.data(), bytes.size(), digest, &length, kSha256, nullptr) != 1) {
    return MakeError(ErrorCode::kInternal, "OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xF];
  }
  return hex;
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace tilesmith
