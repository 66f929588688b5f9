// Seeded mutations of reader inputs, shared by the fuzz drivers: bytes flipped, inserted,
// deleted and repeated; tokens swapped; HLO dimensions replaced by 0, 1 or huge values and
// element types cycled, so that most mutants still parse and reach the back end.
#pragma once

#include <array>
#include <cctype>
#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace tilesmith::fuzz {

inline constexpr std::array<std::string_view, 17> kElementTypes = {
    "pred", "s8",   "s16", "s32", "s64", "u8",   "u16",      "u32",   "u64",
    "f16",  "bf16", "f32", "f64", "c64", "c128", "f8e4m3fn", "f8e5m2"};

/// Dimension values a mutant may get: small ones keep the back end's work bounded.
enum class Dims { kSmall, kAny };

/// A deterministic mutator: the same seed makes the same mutants.
class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

  /// 1 to 3 random mutations of any kind.
  std::string Mutate(std::string text, Dims dims = Dims::kAny) {
    int count = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < count; ++i) text = MutateOnce(std::move(text), dims);
    return text;
  }

  std::string MutateOnce(std::string text, Dims dims) {
    switch (Below(8)) {
      case 0:
        return FlipByte(std::move(text));
      case 1:
        return InsertBytes(std::move(text));
      case 2:
        return DeleteSpan(std::move(text));
      case 3:
        return RepeatSpan(std::move(text));
      case 4:
        return SwapTokens(std::move(text));
      case 5:
        return ReplaceDimension(std::move(text), dims);
      case 6:
        return ReplaceElementType(std::move(text));
      default:
        return ReplaceNumber(std::move(text), dims);
    }
  }

  std::string FlipByte(std::string text) {
    if (text.empty()) return text;
    size_t i = Below(text.size());
    text[i] = static_cast<char>(static_cast<unsigned char>(text[i]) ^ (1u << Below(8)));
    return text;
  }

  std::string InsertBytes(std::string text) {
    static constexpr std::array<std::string_view, 16> kTokens = {"{",
                                                                 "}",
                                                                 "(",
                                                                 ")",
                                                                 "[",
                                                                 "]",
                                                                 ",",
                                                                 "=",
                                                                 "\"",
                                                                 "\n",
                                                                 std::string_view("\0", 1),
                                                                 "\xff\xfe",
                                                                 "-",
                                                                 "99999999999999999999",
                                                                 "{...}",
                                                                 "/*"};
    text.insert(Below(text.size() + 1), kTokens[Below(kTokens.size())]);
    return text;
  }

  std::string DeleteSpan(std::string text) {
    if (text.empty()) return text;
    size_t i = Below(text.size());
    text.erase(i, 1 + Below(32));
    return text;
  }

  std::string RepeatSpan(std::string text) {
    if (text.empty()) return text;
    size_t i = Below(text.size());
    std::string span = text.substr(i, 1 + Below(64));
    text.insert(Below(text.size() + 1), span);
    return text;
  }

  std::string SwapTokens(std::string text) {
    std::vector<std::pair<size_t, size_t>> tokens;  // (begin, length) of words
    for (size_t i = 0; i < text.size();) {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      if (j > i) tokens.emplace_back(i, j - i);
      i = j > i ? j : i + 1;
    }
    if (tokens.size() < 2) return text;
    auto a = tokens[Below(tokens.size())], b = tokens[Below(tokens.size())];
    if (a.first > b.first) std::swap(a, b);
    if (a.first + a.second > b.first) return text;
    std::string first = text.substr(a.first, a.second), second = text.substr(b.first, b.second);
    text.replace(b.first, b.second, first);
    text.replace(a.first, a.second, second);
    return text;
  }

  std::string Dimension(Dims dims) {
    static constexpr std::array<std::string_view, 7> kSmall = {"0", "1", "1", "2", "3", "7", "0"};
    static constexpr std::array<std::string_view, 7> kHuge = {
        "2147483647",          "2147483648",          "4294967296",          "4611686018427387904",
        "9223372036854775807", "9223372036854775808", "18446744073709551616"};
    if (dims == Dims::kAny && OneIn(3)) return std::string(kHuge[Below(kHuge.size())]);
    return std::string(kSmall[Below(kSmall.size())]);
  }

  /// Replaces one dimension value everywhere it appears inside `[...]`, so the module
  /// stays consistent and parses.
  std::string ReplaceDimension(std::string text, Dims dims) {
    static const std::regex kShape(R"(\[([0-9,]+)\])");
    std::vector<std::string> values;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kShape);
         it != std::sregex_iterator(); ++it) {
      std::string inner = (*it)[1];
      for (size_t begin = 0; begin < inner.size();) {
        size_t end = inner.find(',', begin);
        if (end == std::string::npos) end = inner.size();
        if (end > begin) values.push_back(inner.substr(begin, end - begin));
        begin = end + 1;
      }
    }
    if (values.empty()) return text;
    std::string old = values[Below(values.size())], replacement = Dimension(dims);
    std::string out;
    auto last = text.cbegin();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kShape);
         it != std::sregex_iterator(); ++it) {
      out.append(last, text.cbegin() + it->position());
      std::string inner = (*it)[1], rewritten;
      for (size_t begin = 0; begin <= inner.size();) {
        size_t end = inner.find(',', begin);
        if (end == std::string::npos) end = inner.size();
        std::string value = inner.substr(begin, end - begin);
        rewritten += (value == old ? replacement : value);
        if (end < inner.size()) rewritten += ',';
        begin = end + 1;
      }
      out += "[" + rewritten + "]";
      last = text.cbegin() + it->position() + it->length();
    }
    out.append(last, text.cend());
    return out;
  }

  /// Replaces one element type present in the text by another, everywhere.
  std::string ReplaceElementType(std::string text) {
    std::vector<std::string_view> present;
    for (std::string_view type : kElementTypes) {
      if (text.find(std::string(type) + "[") != std::string::npos) present.push_back(type);
    }
    if (present.empty()) return text;
    std::string old = std::string(present[Below(present.size())]) + "[";
    std::string replacement = std::string(kElementTypes[Below(kElementTypes.size())]) + "[";
    size_t at = text.find(old);
    while (at != std::string::npos) {
      if (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) {
        text.replace(at, old.size(), replacement);
        at = text.find(old, at + replacement.size());
      } else {
        at = text.find(old, at + 1);
      }
    }
    return text;
  }

  /// Replaces one run of digits (a size, an index, a literal) by an odd value.
  std::string ReplaceNumber(std::string text, Dims dims) {
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t i = 0; i < text.size();) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      runs.emplace_back(i, j - i);
      i = j;
    }
    if (runs.empty()) return text;
    auto [begin, length] = runs[Below(runs.size())];
    text.replace(begin, length, OneIn(4) ? std::string("-1") : Dimension(dims));
    return text;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace tilesmith::fuzz
