// The report's building blocks on their own: escaping, ticks, charts, and which trials make
// a heat map.
#include "report/svg.h"

#include <gtest/gtest.h>

#include "report/model.h"
#include "report_test_util.h"

namespace tilesmith::report::testing {
namespace {

using nlohmann::json;

TEST(SvgTest, EscapeCoversEveryMetacharacter) {
  EXPECT_EQ(Escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(Escape("&amp;"), "&amp;amp;");
  EXPECT_EQ(Escape("\u00b5s plain"), "\u00b5s plain");
  EXPECT_EQ(Escape(""), "");
}

TEST(SvgTest, NiceTicksAreRoundAndCoverTheRange) {
  std::vector<double> ticks = NiceTicks(0, 47.3, 5);
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.front(), 0);
  EXPECT_GE(ticks.back(), 40);
  EXPECT_LE(ticks.back(), 47.3);
  for (size_t i = 1; i < ticks.size(); ++i) EXPECT_DOUBLE_EQ(ticks[i] - ticks[i - 1], 10);
  EXPECT_EQ(NiceTicks(3, 3).size(), 1u);
  EXPECT_TRUE(NiceTicks(0, INFINITY).empty());
  EXPECT_EQ(Fixed(1.23456), "1.235");
  EXPECT_EQ(Fixed(NAN), "-");
}

TEST(SvgTest, ChartsEscapeLabelsAndTooltips) {
  BarChart chart;
  chart.title = "t<1>";
  chart.y_label = "median time (\u00b5s)";
  chart.bars = {{10, 9, 11, "a&b", "tip <x>", "bar best"}, {20, {}, {}, "c", "d", "bar"}};
  chart.reference = 15;
  std::string svg = RenderBarChart(chart);
  EXPECT_TRUE(svg.starts_with("<svg class=\"chart bar-chart\""));
  EXPECT_EQ(Count(svg, "<rect "), 2);
  EXPECT_EQ(Count(svg, "class=\"whisker\""), 1);
  EXPECT_EQ(Count(svg, "class=\"reference\""), 1);
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<title>tip &lt;x&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">a&amp;b<"), std::string::npos);
  EXPECT_EQ(svg.find("<x>"), std::string::npos);

  HeatMap map;
  map.title = "m";
  map.x_values = {"1", "2"};
  map.y_values = {"8"};
  map.cells = {{5.0, std::nullopt}};
  map.tooltips = {{"a=1", "a=2"}};
  map.unit = "\u00b5s";
  std::string heat = RenderHeatMap(map);
  EXPECT_EQ(Count(heat, "<rect class=\"cell\""), 1);
  EXPECT_EQ(Count(heat, "<rect class=\"cell empty\""), 1);
  EXPECT_NE(heat.find("a=2 (not measured)"), std::string::npos);
  EXPECT_EQ(Count(heat, "class=\"swatch\""), 10);
}

db::MeasurementRecord Ok(json config, double median) {
  db::MeasurementRecord m;
  m.config = std::move(config);
  m.timing = db::Timing{median, median, median, median, median, {median}};
  return m;
}

TEST(HeatMapAxesTest, ExactlyTwoNumericVaryingParameters) {
  std::vector<db::MeasurementRecord> trials = {Ok({{"a", 1}, {"b", 8}, {"c", 3}}, 5),
                                               Ok({{"a", 2}, {"b", 8}, {"c", 3}}, 4),
                                               Ok({{"a", 4}, {"b", 16}, {"c", 3}}, 6)};
  auto axes = HeatMapAxes(trials);
  ASSERT_TRUE(axes.has_value());
  EXPECT_EQ(axes->first, "a");  // three values across, two up
  EXPECT_EQ(axes->second, "b");

  // A failed trial's config does not count: it has no time to show.
  db::MeasurementRecord failed = Ok({{"a", 1}, {"b", 8}, {"c", 99}}, 0);
  failed.status = db::TrialStatus::kCrash;
  failed.timing.reset();
  trials.push_back(failed);
  EXPECT_TRUE(HeatMapAxes(trials).has_value());

  trials.push_back(Ok({{"a", 1}, {"b", 8}, {"c", 4}}, 5));
  EXPECT_EQ(VaryingParameters(trials), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_FALSE(HeatMapAxes(trials).has_value()) << "three parameters";

  std::vector<db::MeasurementRecord> strings = {Ok({{"a", 1}, {"layout", "{0,1}"}}, 1),
                                                Ok({{"a", 2}, {"layout", "{1,0}"}}, 2)};
  EXPECT_FALSE(HeatMapAxes(strings).has_value()) << "a string parameter";
  std::vector<db::MeasurementRecord> one = {Ok({{"a", 1}}, 1), Ok({{"a", 2}}, 2)};
  EXPECT_FALSE(HeatMapAxes(one).has_value()) << "one parameter";
  std::vector<db::MeasurementRecord> missing = {Ok({{"a", 1}, {"b", 1}}, 1), Ok({{"a", 2}}, 2)};
  EXPECT_FALSE(HeatMapAxes(missing).has_value()) << "a field absent from one config";
}

}  // namespace
}  // namespace tilesmith::report::testing
