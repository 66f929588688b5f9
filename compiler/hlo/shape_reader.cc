// Reading shapes and layouts from HLO text.
#include <charconv>
#include <memory>

#include "compiler/hlo/parse_internal.h"
#include "compiler/hlo/parser.h"

namespace tilesmith::hlo {
namespace {

constexpr int kMaxShapeNesting = 64;
// Far above any real array; bounds the recursion of literal reading and index arithmetic.
constexpr size_t kMaxRank = 128;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Expected<PrimitiveType> ReadTypeInParens(TextCursor& cursor, std::string_view field) {
  std::string what = "'(' after ";
  what += field;
  TS_RETURN_IF_ERROR(cursor.Expect('(', what));
  size_t at = cursor.position();
  TS_ASSIGN_OR_RETURN(std::string_view name, cursor.ParseName("an element type"));
  std::optional<PrimitiveType> type = ParsePrimitiveType(name);
  if (!type) return cursor.Fail(at, "unknown element type '" + std::string(name) + "'");
  TS_RETURN_IF_ERROR(cursor.Expect(')', "')'"));
  return *type;
}

Expected<int64_t> ReadIntInParens(TextCursor& cursor, std::string_view field) {
  std::string what = "'(' after ";
  what += field;
  TS_RETURN_IF_ERROR(cursor.Expect('(', what));
  TS_ASSIGN_OR_RETURN(int64_t value, cursor.ParseInt(field));
  TS_RETURN_IF_ERROR(cursor.Expect(')', "')'"));
  return value;
}

Status ReadTiles(TextCursor& cursor, Layout& layout) {
  if (cursor.Peek() != '(') return cursor.FailHere("expected '(' after T in a layout");
  while (cursor.Peek() == '(') {
    cursor.Consume('(');
    Tile tile;
    do {
      if (cursor.Consume('*')) {
        tile.dims.push_back(Tile::kCombineDimension);
      } else {
        TS_ASSIGN_OR_RETURN(int64_t size, cursor.ParseInt("a tile size"));
        tile.dims.push_back(size);
      }
    } while (cursor.Consume(','));
    TS_RETURN_IF_ERROR(cursor.Expect(')', "',' or ')' in a tile"));
    layout.tiles.push_back(std::move(tile));
  }
  return OkStatus();
}

Status ReadLayoutFields(TextCursor& cursor, Layout& layout, int depth) {
  while (cursor.Peek() != '}' && cursor.Peek() != '\0') {
    size_t at = cursor.position();
    char c = cursor.PeekRaw();
    std::string_view rest = cursor.text().substr(at);
    if (rest.starts_with("SC")) {
      cursor.set_position(at + 2);
      TS_RETURN_IF_ERROR(cursor.Expect('(', "'(' after SC"));
      SplitConfig split;
      TS_ASSIGN_OR_RETURN(split.dimension, cursor.ParseInt("a split dimension"));
      TS_RETURN_IF_ERROR(cursor.Expect(':', "':' in SC(dim:indices)"));
      do {
        TS_ASSIGN_OR_RETURN(int64_t index, cursor.ParseInt("a split index"));
        split.split_indices.push_back(index);
      } while (cursor.Consume(','));
      TS_RETURN_IF_ERROR(cursor.Expect(')', "')'"));
      layout.split_configs.push_back(std::move(split));
      continue;
    }
    cursor.set_position(at + 1);
    switch (c) {
      case 'D': {
        TS_RETURN_IF_ERROR(cursor.Expect('(', "'(' after D"));
        do {
          cursor.SkipSpace();
          size_t start = cursor.position();
          size_t end = start;
          std::string_view text = cursor.text();
          while (end < text.size() &&
                 (IsNameChar(text[end]) || text[end] == '+' || text[end] == '~')) {
            ++end;
          }
          if (end == start) return cursor.FailHere("expected a dimension level type in D(...)");
          layout.dim_level_types.emplace_back(text.substr(start, end - start));
          cursor.set_position(end);
        } while (cursor.Consume(','));
        TS_RETURN_IF_ERROR(cursor.Expect(')', "')'"));
        break;
      }
      case 'T':
        TS_RETURN_IF_ERROR(ReadTiles(cursor, layout));
        break;
      case 'L': {
        TS_ASSIGN_OR_RETURN(layout.tail_padding_alignment_in_elements,
                            ReadIntInParens(cursor, "L"));
        break;
      }
      case '#': {
        TS_ASSIGN_OR_RETURN(layout.index_primitive_type, ReadTypeInParens(cursor, "#"));
        break;
      }
      case '*': {
        TS_ASSIGN_OR_RETURN(layout.pointer_primitive_type, ReadTypeInParens(cursor, "*"));
        break;
      }
      case 'E': {
        TS_ASSIGN_OR_RETURN(layout.element_size_in_bits, ReadIntInParens(cursor, "E"));
        break;
      }
      case 'S': {
        TS_ASSIGN_OR_RETURN(layout.memory_space, ReadIntInParens(cursor, "S"));
        break;
      }
      case 'M': {
        TS_ASSIGN_OR_RETURN(layout.dynamic_shape_metadata_prefix_bytes,
                            ReadIntInParens(cursor, "M"));
        break;
      }
      case 'P': {
        TS_RETURN_IF_ERROR(cursor.Expect('(', "'(' after P"));
        TS_ASSIGN_OR_RETURN(Shape physical, ReadShape(cursor, depth + 1));
        TS_RETURN_IF_ERROR(cursor.Expect(')', "')'"));
        layout.physical_shape = std::make_shared<const Shape>(std::move(physical));
        break;
      }
      default:
        cursor.set_position(at);
        return cursor.Fail(at, "unknown layout field " + cursor.DescribeNext() +
                                   " (expected D, T, L, #, *, E, S, SC, P or M)");
    }
  }
  return OkStatus();
}

// A '{' after a shape opens a layout only if a layout can start there; a computation body
// after a program shape (`-> f32[] {`) also starts with '{'.
bool NextIsLayout(TextCursor& cursor) {
  size_t saved = cursor.position();
  if (!cursor.Consume('{')) return false;
  char next = cursor.Peek();
  cursor.set_position(saved);
  return IsDigit(next) || next == ':' || next == '}';
}

Expected<Layout> ReadLayout(TextCursor& cursor, int depth) {
  TS_RETURN_IF_ERROR(cursor.Expect('{', "'{'"));
  Layout layout;
  if (cursor.Peek() != ':' && cursor.Peek() != '}') {
    do {
      TS_ASSIGN_OR_RETURN(int64_t dim, cursor.ParseInt("a minor_to_major dimension"));
      layout.minor_to_major.push_back(dim);
    } while (cursor.Consume(','));
  }
  if (cursor.Consume(':')) TS_RETURN_IF_ERROR(ReadLayoutFields(cursor, layout, depth));
  TS_RETURN_IF_ERROR(cursor.Expect('}', "'}' to close the layout"));
  return layout;
}

// Reads `{rank-1,…,1,0}`, the default layout, written plainly (the common case), without
// building a Layout. Leaves the cursor where it was and returns false on anything else; the
// general reader then reads it (and reports what is wrong).
bool ConsumeDefaultLayout(TextCursor& cursor, size_t rank) {
  size_t saved = cursor.position();
  if (!cursor.Consume('{')) return false;
  std::string_view text = cursor.text();
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0 && !cursor.Consume(',')) break;
    cursor.SkipSpace();
    const char* first = text.data() + cursor.position();
    uint64_t value = 0;
    auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
    if (error != std::errc() || value != rank - 1 - i) break;
    cursor.set_position(cursor.position() + static_cast<size_t>(end - first));
    if (i + 1 == rank && cursor.Consume('}')) return true;
  }
  if (rank == 0 && cursor.Consume('}')) return true;
  cursor.set_position(saved);
  return false;
}

// The text of the layout starting at `at` (`{` to the first `}`), if it is one that the
// cache may hold: without nested braces, so that reading it ends at that `}`.
std::string_view CacheableLayoutText(std::string_view text, size_t at) {
  if (at >= text.size() || text[at] != '{') return {};
  size_t close = text.find_first_of("{}", at + 1);
  if (close == std::string_view::npos || text[close] != '}') return {};
  return text.substr(at, close + 1 - at);
}

}  // namespace

bool NextIsShape(TextCursor& cursor) {
  char c = cursor.Peek();
  if (c == '(') return true;
  std::string_view name = cursor.PeekName();
  if (name.empty() || cursor.PeekRaw() == '%') return false;
  size_t after = static_cast<size_t>(name.data() - cursor.text().data()) + name.size();
  // A name followed by '[' can only be a shape; an unknown type name is reported as such
  // by ReadShape rather than as an unknown opcode.
  return after < cursor.text().size() && cursor.text()[after] == '[';
}

Expected<Shape> ReadShape(TextCursor& cursor, int depth, LayoutCache* layouts) {
  if (depth > kMaxShapeNesting) return cursor.FailHere("shape nested too deeply");
  if (cursor.Consume('(')) {
    std::vector<Shape> elements;
    if (!cursor.Consume(')')) {
      do {
        TS_ASSIGN_OR_RETURN(Shape element, ReadShape(cursor, depth + 1, layouts));
        elements.push_back(std::move(element));
      } while (cursor.Consume(','));
      TS_RETURN_IF_ERROR(cursor.Expect(')', "',' or ')' in a tuple shape"));
    }
    return Shape::Tuple(std::move(elements));
  }
  size_t at = cursor.position();
  TS_ASSIGN_OR_RETURN(std::string_view type_name, cursor.ParseName("a shape"));
  std::optional<PrimitiveType> type = ParsePrimitiveType(type_name);
  if (!type) {
    return cursor.Fail(at, "unknown element type '" + std::string(type_name) + "'");
  }
  if (cursor.PeekRaw() != '[') return cursor.FailHere("expected '[' after the element type");
  cursor.Consume('[');
  if (*type == PrimitiveType::kToken) {
    TS_RETURN_IF_ERROR(cursor.Expect(']', "']' (token shapes have no dimensions)"));
    return Shape::Token();
  }
  // Dimensions are gathered here and copied once into an exactly sized vector.
  int64_t dims_buffer[kMaxRank];
  size_t rank = 0;
  std::vector<int64_t> dynamic_dims;
  if (!cursor.Consume(']')) {
    do {
      if (rank == kMaxRank) {
        return cursor.FailHere("rank above " + std::to_string(kMaxRank) + " is not supported");
      }
      if (cursor.Consume('?')) {
        dynamic_dims.push_back(static_cast<int64_t>(rank));
        dims_buffer[rank++] = Shape::kUnboundedSize;
        continue;
      }
      bool bounded = false;
      if (cursor.Peek() == '<') {
        cursor.Consume('<');
        TS_RETURN_IF_ERROR(cursor.Expect('=', "'=' in a '<=' dynamic bound"));
        bounded = true;
      }
      size_t dim_at = cursor.position();
      TS_ASSIGN_OR_RETURN(int64_t size, cursor.ParseInt("a dimension size"));
      if (size < 0) return cursor.Fail(dim_at, "dimension sizes must be >= 0");
      if (bounded) dynamic_dims.push_back(static_cast<int64_t>(rank));
      dims_buffer[rank++] = size;
    } while (cursor.Consume(','));
    TS_RETURN_IF_ERROR(cursor.Expect(']', "',' or ']' in the dimensions"));
  }
  std::vector<int64_t> dims(dims_buffer, dims_buffer + rank);
  int64_t elements = 1;
  for (int64_t size : dims) {
    if (size == Shape::kUnboundedSize) continue;
    if (__builtin_mul_overflow(elements, size, &elements) || elements > (int64_t{1} << 62)) {
      return cursor.Fail(at, "shape has more than 2^62 elements");
    }
  }
  if (!NextIsLayout(cursor) || ConsumeDefaultLayout(cursor, rank)) {
    Shape shape = Shape::Array(*type, std::move(dims));
    for (int64_t d : dynamic_dims) shape.set_dynamic_dim(d, true);
    return shape;
  }
  size_t layout_at = cursor.position();
  std::string_view layout_text =
      layouts != nullptr ? CacheableLayoutText(cursor.text(), layout_at) : std::string_view();
  std::shared_ptr<const Layout> shared;
  if (!layout_text.empty()) {
    auto it = layouts->layouts.find(layout_text);
    if (it != layouts->layouts.end()) {
      shared = it->second;
      cursor.set_position(layout_at + layout_text.size());
    }
  }
  Layout layout;
  if (shared == nullptr) {
    TS_ASSIGN_OR_RETURN(layout, ReadLayout(cursor, depth));
  }
  const Layout& read = shared != nullptr ? *shared : layout;
  if (read.minor_to_major.empty() && rank > 0) {
    return cursor.Fail(layout_at, "layout " + LayoutToString(read) +
                                      " lists no dimensions for a rank-" + std::to_string(rank) +
                                      " shape");
  }
  Shape shape = Shape::Array(*type, std::move(dims));
  if (shared == nullptr && !layout_text.empty() &&
      cursor.position() == layout_at + layout_text.size() && !layout.IsDefault() &&
      layouts->layouts.size() < LayoutCache::kMaxEntries) {
    shared = std::make_shared<const Layout>(std::move(layout));
    layouts->layouts.emplace(layout_text, shared);
  }
  if (shared != nullptr) {
    shape.set_shared_layout(std::move(shared));
  } else {
    shape.set_layout(std::move(layout));
  }
  for (int64_t d : dynamic_dims) shape.set_dynamic_dim(d, true);
  if (std::string problem = ValidateLayout(shape); !problem.empty()) {
    return cursor.Fail(layout_at, problem);
  }
  return shape;
}

Expected<Shape> ParseShape(std::string_view text) {
  TextCursor cursor(text, "<shape>");
  TS_ASSIGN_OR_RETURN(Shape shape, ReadShape(cursor));
  if (!cursor.AtEnd()) {
    return cursor.FailHere("unexpected " + cursor.DescribeNext() + " after the shape");
  }
  return shape;
}

}  // namespace tilesmith::hlo
