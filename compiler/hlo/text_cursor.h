// The scanning layer under the HLO text parsers: a position in the text, whitespace and
// comment skipping, and the small tokens (names, integers, raw attribute values). Errors
// carry `file:line:col`. Private to compiler/hlo.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace tilesmith::hlo {

class TextCursor {
 public:
  TextCursor(std::string_view text, std::string_view file_name)
      : text_(text), file_name_(file_name) {}

  size_t position() const { return pos_; }
  void set_position(size_t pos) { pos_ = pos; }
  std::string_view text() const { return text_; }

  /// Skips spaces, newlines, `// …` and `/* … */` comments.
  void SkipSpace() {
    // Most calls stand on a token already: decide that inline.
    if (pos_ < text_.size() && text_[pos_] > ' ' && text_[pos_] != '/') return;
    SkipSpaceAndComments();
  }
  /// True when only whitespace and comments remain.
  bool AtEnd();
  /// Next character after skipping space, or '\0' at the end.
  char Peek() {
    SkipSpace();
    return PeekRaw();
  }
  /// The character right at the cursor (no skipping), or '\0'.
  char PeekRaw() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  /// Skips space; consumes `c` if it is next.
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  /// Skips space; consumes `word` if the next name equals it exactly.
  bool ConsumeWord(std::string_view word);
  /// Skips space; consumes `c` or fails with "expected <what>".
  Status Expect(char c, std::string_view what);

  /// A name: `[%]?[A-Za-z_$.][A-Za-z0-9_.\-$]*` without the `%`. Fails naming `what`.
  Expected<std::string_view> ParseName(std::string_view what);
  /// The next name without consuming it ("" if none).
  std::string_view PeekName();
  Expected<int64_t> ParseInt(std::string_view what);
  /// `{1,2,3}`, `{}`.
  Expected<std::vector<int64_t>> ParseIntList(std::string_view what);
  /// `a x b x c` integers separated by 'x' (window sizes).
  Expected<std::vector<int64_t>> ParseIntsSeparatedByX(std::string_view what);
  Expected<bool> ParseBool(std::string_view what);
  /// A double-quoted string with backslash escapes; returns the unescaped contents.
  Expected<std::string> ParseQuotedString(std::string_view what);
  /// An attribute value we keep as text: balanced brackets and strings, ending at a
  /// top-level `,`, whitespace or unmatched closing bracket.
  Expected<std::string_view> ParseRawValue(std::string_view what);

  /// `file:line:col` of a position.
  std::string LocationOf(size_t pos) const;
  /// An error located at `pos`: `file:line:col: error: message`.
  Error ErrorAt(size_t pos, std::string_view message) const;
  std::unexpected<Error> Fail(size_t pos, std::string_view message) const {
    return std::unexpected(ErrorAt(pos, message));
  }
  /// Error at the current position (after skipping space).
  std::unexpected<Error> FailHere(std::string_view message);
  /// A short quote of the text at the cursor for messages: `'tanhh'` or "end of input".
  std::string DescribeNext();

 private:
  void SkipSpaceAndComments();

  std::string_view text_;
  std::string_view file_name_;
  size_t pos_ = 0;
};

bool IsNameStart(char c);
bool IsNameChar(char c);

}  // namespace tilesmith::hlo
