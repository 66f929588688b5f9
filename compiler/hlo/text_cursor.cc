#include "compiler/hlo/text_cursor.h"

#include <array>
#include <charconv>

namespace tilesmith::hlo {

namespace {

constexpr bool IsNameStartSlow(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

// Name characters by byte: names are scanned for every instruction, operand and shape.
constexpr auto kNameChars = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) {
    char ch = static_cast<char>(c);
    table[c] = IsNameStartSlow(ch) || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
  }
  return table;
}();

}  // namespace

bool IsNameStart(char c) { return IsNameStartSlow(c); }

bool IsNameChar(char c) { return kNameChars[static_cast<unsigned char>(c)]; }

void TextCursor::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t newline = text_.find('\n', pos_);
      pos_ = newline == std::string_view::npos ? text_.size() : newline + 1;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t close = text_.find("*/", pos_ + 2);
      pos_ = close == std::string_view::npos ? text_.size() : close + 2;
    } else {
      return;
    }
  }
}

bool TextCursor::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

bool TextCursor::ConsumeWord(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  size_t end = pos_ + word.size();
  if (end < text_.size() && IsNameChar(text_[end])) return false;
  pos_ = end;
  return true;
}

Status TextCursor::Expect(char c, std::string_view what) {
  if (Consume(c)) return OkStatus();
  std::string message = "expected ";
  message += what;
  message += ", found ";
  message += DescribeNext();
  return FailHere(message);
}

std::string_view TextCursor::PeekName() {
  SkipSpace();
  size_t start = pos_;
  if (start < text_.size() && text_[start] == '%') ++start;
  if (start >= text_.size() || !IsNameStart(text_[start])) return {};
  size_t end = start + 1;
  while (end < text_.size() && kNameChars[static_cast<unsigned char>(text_[end])]) ++end;
  return text_.substr(start, end - start);
}

Expected<std::string_view> TextCursor::ParseName(std::string_view what) {
  std::string_view name = PeekName();
  if (name.empty()) {
    std::string message = "expected ";
    message += what;
    message += ", found ";
    message += DescribeNext();
    return FailHere(message);
  }
  pos_ = static_cast<size_t>(name.data() - text_.data()) + name.size();
  return name;
}

Expected<int64_t> TextCursor::ParseInt(std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  const char* first = text_.data() + pos_;
  const char* last = text_.data() + text_.size();
  if (first < last && *first == '+') ++first;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    return Fail(start, std::string(what) + " does not fit in 64 bits");
  }
  if (ec != std::errc()) {
    std::string message = "expected ";
    message += what;
    message += " (an integer), found ";
    message += DescribeNext();
    return Fail(start, message);
  }
  pos_ = static_cast<size_t>(ptr - text_.data());
  return value;
}

Expected<std::vector<int64_t>> TextCursor::ParseIntList(std::string_view what) {
  std::string open = "'{' to start ";
  open += what;
  TS_RETURN_IF_ERROR(Expect('{', open));
  std::vector<int64_t> values;
  if (Consume('}')) return values;
  do {
    TS_ASSIGN_OR_RETURN(int64_t value, ParseInt(what));
    values.push_back(value);
  } while (Consume(','));
  std::string close = "',' or '}' in ";
  close += what;
  TS_RETURN_IF_ERROR(Expect('}', close));
  return values;
}

Expected<std::vector<int64_t>> TextCursor::ParseIntsSeparatedByX(std::string_view what) {
  std::vector<int64_t> values;
  TS_ASSIGN_OR_RETURN(int64_t first, ParseInt(what));
  values.push_back(first);
  while (PeekRaw() == 'x') {
    ++pos_;
    TS_ASSIGN_OR_RETURN(int64_t next, ParseInt(what));
    values.push_back(next);
  }
  return values;
}

Expected<bool> TextCursor::ParseBool(std::string_view what) {
  if (ConsumeWord("true")) return true;
  if (ConsumeWord("false")) return false;
  std::string message = "expected true or false for ";
  message += what;
  message += ", found ";
  message += DescribeNext();
  return FailHere(message);
}

Expected<std::string> TextCursor::ParseQuotedString(std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  if (PeekRaw() != '"') {
    std::string message = "expected a quoted string for ";
    message += what;
    return FailHere(message);
  }
  std::string value;
  for (size_t i = pos_ + 1; i < text_.size(); ++i) {
    char c = text_[i];
    if (c == '"') {
      pos_ = i + 1;
      return value;
    }
    if (c == '\\' && i + 1 < text_.size()) {
      char next = text_[++i];
      value += next == 'n' ? '\n' : next == 't' ? '\t' : next;
      continue;
    }
    value += c;
  }
  return Fail(start, "unterminated string");
}

Expected<std::string_view> TextCursor::ParseRawValue(std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  // Closing brackets still expected, innermost last (at most 257 deep).
  char closers_buffer[258];
  size_t depth = 0;
  size_t i = pos_;
  for (; i < text_.size(); ++i) {
    char c = text_[i];
    if (c == '"') {
      // Skip the string, honouring escapes.
      for (++i; i < text_.size() && text_[i] != '"'; ++i) {
        if (text_[i] == '\\') ++i;
      }
      if (i >= text_.size()) return Fail(start, "unterminated string in " + std::string(what));
      continue;
    }
    if (c == '{' || c == '[' || c == '(') {
      if (depth > 256) return Fail(i, "brackets nested too deeply");
      closers_buffer[depth++] = c == '{' ? '}' : c == '[' ? ']' : ')';
      continue;
    }
    if (c == '}' || c == ']' || c == ')') {
      if (depth == 0) break;
      if (closers_buffer[depth - 1] != c) {
        return Fail(i, std::string("mismatched '") + c + "' in " + std::string(what));
      }
      --depth;
      continue;
    }
    if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r')) break;
  }
  if (depth != 0) {
    return Fail(start, "unbalanced brackets in " + std::string(what));
  }
  if (i == start) {
    std::string message = "expected a value for ";
    message += what;
    message += ", found ";
    message += DescribeNext();
    return FailHere(message);
  }
  pos_ = i;
  return text_.substr(start, i - start);
}

std::string TextCursor::LocationOf(size_t pos) const {
  pos = std::min(pos, text_.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < pos; ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::string location(file_name_);
  location += ':';
  location += std::to_string(line);
  location += ':';
  location += std::to_string(pos - line_start + 1);
  return location;
}

Error TextCursor::ErrorAt(size_t pos, std::string_view message) const {
  std::string text = LocationOf(pos);
  text += ": error: ";
  text += message;
  return Error{ErrorCode::kInvalidArgument, std::move(text)};
}

std::unexpected<Error> TextCursor::FailHere(std::string_view message) {
  SkipSpace();
  return Fail(pos_, message);
}

std::string TextCursor::DescribeNext() {
  SkipSpace();
  if (pos_ >= text_.size()) return "end of input";
  size_t end = pos_;
  if (IsNameChar(text_[end]) || text_[end] == '%') {
    ++end;
    while (end < text_.size() && IsNameChar(text_[end]) && end - pos_ < 40) ++end;
  } else {
    ++end;
  }
  std::string quoted = "'";
  quoted += text_.substr(pos_, end - pos_);
  quoted += "'";
  return quoted;
}

}  // namespace tilesmith::hlo
