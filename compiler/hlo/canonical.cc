#include "compiler/hlo/canonical.h"

#include <openssl/evp.h>

#include <memory>
#include <unordered_map>

#include "compiler/hlo/printer.h"

namespace tilesmith::hlo {

std::string CanonicalText(const HloComputation& fusion) {
  std::vector<const HloComputation*> computations = HloModule::CalleesPostOrder(&fusion);
  std::unordered_map<const HloComputation*, std::string> computation_names;
  for (size_t i = 0; i + 1 < computations.size(); ++i) {
    computation_names[computations[i]] = "comp_" + std::to_string(i);
  }
  computation_names[&fusion] = "fusion";

  std::unordered_map<const HloInstruction*, std::string> instruction_names;
  PrintOptions options;
  options.print_non_semantic_attributes = false;
  options.instruction_name = [&](const HloInstruction& instruction) {
    return instruction_names.at(&instruction);
  };
  options.computation_name = [&](const HloComputation& computation) {
    return computation_names.at(&computation);
  };
  std::string text;
  for (const HloComputation* computation : computations) {
    std::vector<const HloInstruction*> order = computation->PostOrder();
    instruction_names.clear();
    for (size_t i = 0; i < order.size(); ++i) {
      instruction_names[order[i]] = "tmp_" + std::to_string(i);
    }
    text += PrintComputation(*computation, options, order);
  }
  return text;
}

std::string CanonicalFusionText(const HloModule& module) { return CanonicalText(*module.fusion()); }

Expected<std::string> Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
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

Expected<std::string> FusionFingerprint(const HloModule& module) {
  return Sha256Hex(CanonicalFusionText(module));
}

}  // namespace tilesmith::hlo
