// Small inline-SVG chart helpers for the tuning report: escaping, number formatting and four
// charts (sorted bars, trial series, class strip, heat map). Every chart is one `<svg>` element
// with axis labels, a title and `<title>` tooltips; nothing refers to anything outside it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilesmith::report {

/// Escapes text for HTML and SVG content and attribute values (& < > " ').
std::string Escape(std::string_view text);

/// `value` with `digits` decimals ("12.346"); non-finite values as "-".
std::string Fixed(double value, int digits = 3);

/// Up to about `count` evenly spaced round tick values covering [low, high].
std::vector<double> NiceTicks(double low, double high, int count = 5);

/// One bar of a sorted bar chart.
struct Bar {
  double value = 0;
  std::optional<double> low;   ///< Whisker from `low` to `high` (p20..p80), when both set.
  std::optional<double> high;  ///<
  std::string label;           ///< Under the bar when the chart has room; else only in the tooltip.
  std::string tooltip;         ///< Plain text; escaped here.
  std::string css_class;       ///< e.g. "bar best"; one of the page's classes.
};

/// A bar chart in the given order (callers sort). `reference` draws a dashed horizontal line
/// (a speedup of 1.0x, say).
struct BarChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Bar> bars;
  std::optional<double> reference;
  std::string reference_label;
};
std::string RenderBarChart(const BarChart& chart);

/// One point of a series chart; points without a value are drawn as marks on the x axis.
struct SeriesPoint {
  double x = 0;
  std::optional<double> y;
  std::string tooltip;
  std::string css_class;  ///< The dot's class ("trial", "fail fail-timeout", …).
};

/// Dots at (x, y) and a step line through `line` (best so far), x increasing.
struct SeriesChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<SeriesPoint> points;
  std::vector<std::pair<double, double>> line;
  std::string line_label;
};
std::string RenderSeriesChart(const SeriesChart& chart);

/// Categories as rows and marks along a shared x axis (failed trials by class over trials).
struct StripRow {
  std::string label;
  std::string css_class;
  std::vector<SeriesPoint> marks;  ///< `y` is ignored.
};
struct StripChart {
  std::string title;
  std::string x_label;
  double x_max = 1;
  std::vector<StripRow> rows;
};
std::string RenderStripChart(const StripChart& chart);

/// A heat map over two parameters; cells without a value are drawn grey as "not measured".
struct HeatMap {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x_values;  ///< Column labels, in order.
  std::vector<std::string> y_values;  ///< Row labels, bottom to top.
  /// cells[y][x]: the value (µs), or none.
  std::vector<std::vector<std::optional<double>>> cells;
  std::vector<std::vector<std::string>> tooltips;  ///< Same shape as `cells`.
  std::string unit;                                ///< "µs".
};
std::string RenderHeatMap(const HeatMap& map);

}  // namespace tilesmith::report
