#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilesmith::report {
namespace {

// The drawing area every chart shares: a viewBox of kWidth x height, margins for the axes.
constexpr double kWidth = 900;
constexpr double kLeft = 78;
constexpr double kRight = 24;
constexpr double kTop = 34;

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// A short axis label: at most 4 significant digits, no trailing zeros.
std::string Tick(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", std::abs(value) < 1e-12 ? 0.0 : value);
  return text;
}

std::string Open(double height, std::string_view css_class, std::string_view title) {
  std::string out = "<svg class=\"chart " + std::string(css_class) + "\" viewBox=\"0 0 " +
                    Num(kWidth) + " " + Num(height) + "\" role=\"img\" aria-label=\"" +
                    Escape(title) + "\">\n";
  out += "<text class=\"chart-title\" x=\"" + Num(kWidth / 2) + "\" y=\"20\">" + Escape(title) +
         "</text>\n";
  return out;
}

std::string Text(double x, double y, std::string_view css_class, std::string_view text,
                 std::string_view extra = "") {
  return "<text class=\"" + std::string(css_class) + "\" x=\"" + Num(x) + "\" y=\"" + Num(y) +
         "\"" + std::string(extra) + ">" + Escape(text) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  return "<line class=\"" + std::string(css_class) + "\" x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) +
         "\" x2=\"" + Num(x2) + "\" y2=\"" + Num(y2) + "\"/>\n";
}

std::string Tooltip(std::string_view text) { return "<title>" + Escape(text) + "</title>"; }

// A linear scale from a data interval onto a pixel interval.
struct Scale {
  double d0, d1, p0, p1;
  double operator()(double v) const {
    return d1 == d0 ? (p0 + p1) / 2 : p0 + (v - d0) / (d1 - d0) * (p1 - p0);
  }
};

// The y axis with grid lines and its label, rotated along the left edge.
std::string YAxis(const Scale& y, const std::vector<double>& ticks, double right,
                  std::string_view label) {
  std::string out;
  for (double t : ticks) {
    out += Line(kLeft, y(t), right, y(t), "grid");
    out += Text(kLeft - 6, y(t) + 4, "tick tick-y", Tick(t));
  }
  double middle = (y.p0 + y.p1) / 2;
  out += Text(16, middle, "axis-label", label,
              " transform=\"rotate(-90 16 " + Num(middle) + ")\" text-anchor=\"middle\"");
  return out;
}

std::string XLabel(double bottom, std::string_view label) {
  return Text((kLeft + kWidth - kRight) / 2, bottom, "axis-label", label,
              " text-anchor=\"middle\"");
}

// Integer trial ticks along x from 1 to `x_max`.
std::string XTrialTicks(const Scale& x, double x_max, double y) {
  std::string out;
  for (double t : NiceTicks(1, std::max(1.0, x_max), 8)) {
    if (t < 1 || t != std::floor(t)) continue;
    out += Line(x(t), y, x(t), y + 4, "axis");
    out += Text(x(t), y + 16, "tick", Tick(t), " text-anchor=\"middle\"");
  }
  return out;
}

// Fast (0) green, through yellow, to slow (1) red.
std::string HeatColour(double t) {
  static const double stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
  t = std::clamp(t, 0.0, 1.0);
  int i = t < 0.5 ? 0 : 1;
  double f = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  char text[16];
  std::snprintf(text, sizeof(text), "#%02x%02x%02x",
                static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return text;
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::vector<double> NiceTicks(double low, double high, int count) {
  if (!std::isfinite(low) || !std::isfinite(high)) return {};
  if (high < low) std::swap(low, high);
  if (high == low) return {low};
  double raw = (high - low) / std::max(1, count);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(low / step - 1e-9) * step; t <= high + step * 1e-9; t += step) {
    ticks.push_back(t);
  }
  return ticks;
}

std::string RenderBarChart(const BarChart& chart) {
  const bool labels = !chart.bars.empty() && chart.bars.size() <= 30;
  const double height = labels ? 360 : 300;
  const double bottom = height - (labels ? 110 : 50);
  // Whiskers may reach past the tallest bar, but never squash the bars below half the chart:
  // a whisker beyond that is clipped at the top (its tooltip has the numbers).
  double top_value = chart.reference.value_or(0);
  double top_whisker = 0;
  for (const Bar& bar : chart.bars) {
    top_value = std::max(top_value, bar.value);
    top_whisker = std::max(top_whisker, bar.high.value_or(0));
  }
  top_value = std::max(top_value, std::min(top_whisker, top_value * 2));
  std::vector<double> ticks = NiceTicks(0, top_value > 0 ? top_value * 1.05 : 1, 5);
  Scale y{0, ticks.empty() ? 1 : std::max(ticks.back(), top_value), bottom, kTop + 10};
  const double right = kWidth - kRight;
  std::string out = Open(height, "bar-chart", chart.title);
  out += YAxis(y, ticks, right, chart.y_label);
  const double slot = std::min(90.0, (right - kLeft) / std::max<size_t>(1, chart.bars.size()));
  const double gap = chart.bars.size() < 100 ? slot * 0.15 : 0;
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& bar = chart.bars[i];
    double x = kLeft + slot * static_cast<double>(i) + gap / 2;
    double top = y(std::max(0.0, bar.value));
    out += "<rect class=\"" + Escape(bar.css_class) + "\" x=\"" + Num(x) + "\" y=\"" + Num(top) +
           "\" width=\"" + Num(std::max(0.5, slot - gap)) + "\" height=\"" +
           Num(std::max(0.5, bottom - top)) + "\">" + Tooltip(bar.tooltip) + "</rect>\n";
    if (bar.low && bar.high) {
      double middle = x + (slot - gap) / 2;
      double domain_top = y.d1;
      out += Line(middle, y(std::min(*bar.low, domain_top)), middle,
                  y(std::min(*bar.high, domain_top)), "whisker");
    }
    if (labels && !bar.label.empty()) {
      double lx = x + (slot - gap) / 2;
      std::string label = bar.label.size() > 18 ? bar.label.substr(0, 17) + "…" : bar.label;
      out += Text(lx, bottom + 12, "tick bar-label", label,
                  " text-anchor=\"end\" transform=\"rotate(-40 " + Num(lx) + " " +
                      Num(bottom + 12) + ")\"");
    }
  }
  if (chart.reference) {
    out += Line(kLeft, y(*chart.reference), right, y(*chart.reference), "reference");
    out += Text(right - 4, y(*chart.reference) - 4, "tick", chart.reference_label,
                " text-anchor=\"end\"");
  }
  out += Line(kLeft, bottom, right, bottom, "axis");
  out += Line(kLeft, bottom, kLeft, kTop + 6, "axis");
  out += XLabel(height - 10, chart.x_label);
  return out + "</svg>\n";
}

std::string RenderSeriesChart(const SeriesChart& chart) {
  const double height = 320;
  const double bottom = height - 56;
  const double right = kWidth - kRight;
  double x_max = 1;
  double y_max = 0;
  for (const SeriesPoint& p : chart.points) {
    x_max = std::max(x_max, p.x);
    if (p.y) y_max = std::max(y_max, *p.y);
  }
  std::vector<double> ticks = NiceTicks(0, y_max > 0 ? y_max * 1.05 : 1, 5);
  Scale y{0, ticks.empty() ? 1 : std::max(ticks.back(), y_max), bottom - 10, kTop + 10};
  Scale x{x_max > 1 ? 1.0 : 0.0, x_max, kLeft + 12, right - 12};
  std::string out = Open(height, "series-chart", chart.title);
  out += YAxis(y, ticks, right, chart.y_label);
  out += Line(kLeft, bottom, right, bottom, "axis");
  out += Line(kLeft, bottom, kLeft, kTop + 6, "axis");
  out += XTrialTicks(x, x_max, bottom);
  if (!chart.line.empty()) {
    std::string path = "M" + Num(x(chart.line[0].first)) + " " + Num(y(chart.line[0].second));
    for (size_t i = 1; i < chart.line.size(); ++i) {
      path += " H" + Num(x(chart.line[i].first)) + " V" + Num(y(chart.line[i].second));
    }
    path += " H" + Num(x(x_max));
    out +=
        "<path class=\"best-line\" d=\"" + path + "\">" + Tooltip(chart.line_label) + "</path>\n";
  }
  for (const SeriesPoint& p : chart.points) {
    if (p.y) {
      out += "<circle class=\"" + Escape(p.css_class) + "\" cx=\"" + Num(x(p.x)) + "\" cy=\"" +
             Num(y(*p.y)) + "\" r=\"4\">" + Tooltip(p.tooltip) + "</circle>\n";
    } else {  // A trial without a time (a failure): a cross on the x axis.
      double cx = x(p.x);
      double cy = bottom - 6;
      out += "<path class=\"" + Escape(p.css_class) + "\" d=\"M" + Num(cx - 4) + " " + Num(cy - 4) +
             " L" + Num(cx + 4) + " " + Num(cy + 4) + " M" + Num(cx - 4) + " " + Num(cy + 4) +
             " L" + Num(cx + 4) + " " + Num(cy - 4) + "\">" + Tooltip(p.tooltip) + "</path>\n";
    }
  }
  if (!chart.line_label.empty()) {
    out += Line(right - 190, kTop + 2, right - 166, kTop + 2, "best-line");
    out += Text(right - 160, kTop + 6, "tick", chart.line_label);
  }
  out += XLabel(height - 12, chart.x_label);
  return out + "</svg>\n";
}

std::string RenderStripChart(const StripChart& chart) {
  const double row_height = 28;
  const double left = 150;
  const double right = kWidth - kRight;
  const double bottom = kTop + 10 + row_height * static_cast<double>(chart.rows.size());
  const double height = bottom + 46;
  Scale x{chart.x_max > 1 ? 1.0 : 0.0, std::max(1.0, chart.x_max), left + 12, right - 12};
  std::string out = Open(height, "strip-chart", chart.title);
  for (size_t r = 0; r < chart.rows.size(); ++r) {
    const StripRow& row = chart.rows[r];
    double cy = kTop + 10 + row_height * (static_cast<double>(r) + 0.5);
    out += Line(left, cy, right, cy, "grid");
    out += "<text class=\"tick strip-label " + Escape(row.css_class) + "\" x=\"" + Num(left - 8) +
           "\" y=\"" + Num(cy + 4) + "\" text-anchor=\"end\">" + Escape(row.label) + "</text>\n";
    for (const SeriesPoint& mark : row.marks) {
      out += "<rect class=\"" + Escape(mark.css_class) + "\" x=\"" + Num(x(mark.x) - 5) +
             "\" y=\"" + Num(cy - 8) + "\" width=\"10\" height=\"16\">" + Tooltip(mark.tooltip) +
             "</rect>\n";
    }
  }
  out += Line(left, bottom, right, bottom, "axis");
  // XTrialTicks draws from kLeft's scale; this chart's scale starts at `left`.
  for (double t : NiceTicks(1, std::max(1.0, chart.x_max), 8)) {
    if (t < 1 || t != std::floor(t)) continue;
    out += Line(x(t), bottom, x(t), bottom + 4, "axis");
    out += Text(x(t), bottom + 16, "tick", Tick(t), " text-anchor=\"middle\"");
  }
  out +=
      Text((left + right) / 2, height - 10, "axis-label", chart.x_label, " text-anchor=\"middle\"");
  return out + "</svg>\n";
}

std::string RenderHeatMap(const HeatMap& map) {
  const size_t columns = std::max<size_t>(1, map.x_values.size());
  const size_t rows = std::max<size_t>(1, map.y_values.size());
  const double left = kLeft + 40;
  const double legend_width = 130;
  const double right = kWidth - kRight - legend_width;
  const double cell_w = (right - left) / static_cast<double>(columns);
  const double cell_h = std::clamp(300.0 / static_cast<double>(rows), 14.0, 48.0);
  const double bottom = kTop + 10 + cell_h * static_cast<double>(rows);
  const double height = bottom + 56;
  double low = INFINITY;
  double high = -INFINITY;
  for (const auto& row : map.cells) {
    for (const auto& cell : row) {
      if (cell && *cell > 0) low = std::min(low, *cell), high = std::max(high, *cell);
    }
  }
  // Log scale: a 2x difference looks the same at 10 µs and at 10 ms.
  auto position = [&](double v) {
    return high > low ? (std::log(v) - std::log(low)) / (std::log(high) - std::log(low)) : 0.0;
  };
  std::string out = Open(height, "heat-map", map.title);
  for (size_t r = 0; r < map.cells.size() && r < rows; ++r) {
    double top = bottom - cell_h * static_cast<double>(r + 1);
    for (size_t c = 0; c < map.cells[r].size() && c < columns; ++c) {
      double x0 = left + cell_w * static_cast<double>(c);
      const auto& cell = map.cells[r][c];
      std::string tip = r < map.tooltips.size() && c < map.tooltips[r].size() ? map.tooltips[r][c]
                                                                              : std::string();
      std::string fill = cell && *cell > 0 ? HeatColour(position(*cell)) : "none";
      out += "<rect class=\"" + std::string(cell ? "cell" : "cell empty") + "\" x=\"" + Num(x0) +
             "\" y=\"" + Num(top) + "\" width=\"" + Num(cell_w) + "\" height=\"" + Num(cell_h) +
             "\"" + (cell ? " fill=\"" + fill + "\"" : std::string()) + ">" +
             Tooltip(cell ? tip : tip + " (not measured)") + "</rect>\n";
      if (cell && cell_w >= 52 && cell_h >= 16) {
        out += Text(x0 + cell_w / 2, top + cell_h / 2 + 4, "cell-text", Tick(*cell),
                    " text-anchor=\"middle\"");
      }
    }
  }
  for (size_t c = 0; c < map.x_values.size(); ++c) {
    out += Text(left + cell_w * (static_cast<double>(c) + 0.5), bottom + 16, "tick",
                map.x_values[c], " text-anchor=\"middle\"");
  }
  for (size_t r = 0; r < map.y_values.size(); ++r) {
    out += Text(left - 6, bottom - cell_h * (static_cast<double>(r) + 0.5) + 4, "tick tick-y",
                map.y_values[r]);
  }
  out +=
      Text((left + right) / 2, height - 12, "axis-label", map.x_label, " text-anchor=\"middle\"");
  double middle = (kTop + 10 + bottom) / 2;
  out += Text(20, middle, "axis-label", map.y_label,
              " transform=\"rotate(-90 20 " + Num(middle) + ")\" text-anchor=\"middle\"");
  // The legend: ten swatches from the fastest to the slowest cell.
  if (high >= low) {
    double lx = kWidth - kRight - legend_width + 30;
    out += Text(lx, kTop + 6, "tick", "median " + map.unit);
    for (int i = 0; i < 10; ++i) {
      double t = i / 9.0;
      double value =
          high > low ? std::exp(std::log(low) + t * (std::log(high) - std::log(low))) : low;
      out += "<rect class=\"swatch\" x=\"" + Num(lx) + "\" y=\"" + Num(kTop + 14 + i * 16.0) +
             "\" width=\"18\" height=\"16\" fill=\"" + HeatColour(t) + "\">" +
             Tooltip(Tick(value) + " " + map.unit) + "</rect>\n";
    }
    out += Text(lx + 24, kTop + 26, "tick", Tick(low) + " (fast)");
    out += Text(lx + 24, kTop + 14 + 160 - 4, "tick", Tick(high) + " (slow)");
  }
  return out + "</svg>\n";
}

}  // namespace tilesmith::report
