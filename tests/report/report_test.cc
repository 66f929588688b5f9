// The tuning report over a real SQLite file filled by real tunes: its sections, one SVG per
// chart, the heat map exactly for two-parameter spaces, failures by class, escaping of user
// text, and no reference to anything outside the page. `tilesmith report` runs as a process.
#include "report/report.h"

#include <gtest/gtest.h>

#include <regex>

#include "report_test_util.h"

namespace tilesmith::report::testing {
namespace {

// The page as the library renders it for `options`.
std::string Render(const SharedDatabase& database, ReportOptions options = {}) {
  auto store = db::SqliteStore::Open(database.db());
  EXPECT_TRUE(store.has_value()) << store.error().message;
  if (!store) return "";
  auto page = RenderReport(**store, options);
  EXPECT_TRUE(page.has_value()) << page.error().message;
  return page ? *page : "";
}

// The part of `page` from the fusion section of `fingerprint` to the next one.
std::string Section(const std::string& page, const std::string& fingerprint) {
  size_t begin = page.find("<section class=\"fusion\" id=\"f-" + fingerprint + "\"");
  if (begin == std::string::npos) return "";
  size_t end = page.find("<section class=\"fusion\"", begin + 1);
  return page.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST(ReportTest, HasTheSummaryAndOneSectionPerFusion) {
  REPORT_REQUIRE_DATABASE();
  std::string page = Render(database);
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(page.ends_with("</html>\n"));
  EXPECT_EQ(Count(page, "<section id=\"summary\">"), 1);
  EXPECT_EQ(Count(page, "<section class=\"fusion\""), 3);
  for (const std::string& fingerprint :
       {database.small_fingerprint, database.gelu_fingerprint, database.hostile_fingerprint}) {
    EXPECT_EQ(Count(page, "id=\"f-" + fingerprint + "\""), 1) << fingerprint;
    // The summary row links to the key's anchor, and the anchor exists.
    std::string row_start = "<a href=\"#f-" + fingerprint + "-";
    ASSERT_NE(page.find(row_start), std::string::npos) << fingerprint;
    EXPECT_NE(page.find("<td><code>" + fingerprint.substr(0, 12) + "</code></td>"),
              std::string::npos);
  }
  // The summary table: a header and one row per key, with the listed columns.
  size_t table = page.find("<table class=\"summary\">");
  ASSERT_NE(table, std::string::npos);
  std::string summary = page.substr(table, page.find("</table>", table) - table);
  EXPECT_EQ(Count(summary, "<tr>"), 4);
  for (const char* column : {"fusion", "fingerprint", "device", "emitter", "configs measured",
                             "failures", "default time", "best time", "speedup"}) {
    EXPECT_NE(summary.find(std::string("<th>") + column + "</th>"), std::string::npos) << column;
  }
  // One SVG per chart: the speedup chart; per key the config chart and the best-so-far
  // curve; GELU's and the hostile kernel's failure strips; the small fusion's heat map.
  EXPECT_EQ(Count(page, "<svg "), 1 + 3 * 2 + 2 + 1);
  EXPECT_EQ(Count(page, "<svg "), Count(page, "</svg>"));
  EXPECT_EQ(Count(page, "class=\"chart bar-chart\""), 4);
  EXPECT_EQ(Count(page, "class=\"chart series-chart\""), 3);
  EXPECT_EQ(Count(page, "class=\"chart strip-chart\""), 2);
  EXPECT_EQ(Count(page, "class=\"chart heat-map\""), 1);
  // Axis labels with units and tooltips.
  EXPECT_NE(page.find("median time (\u00b5s)"), std::string::npos);
  EXPECT_NE(page.find("trial (measurement order)"), std::string::npos);
  EXPECT_GT(Count(page, "<title>"), 20);
}

TEST(ReportTest, EveryMeasuredConfigIsABarSortedWithDefaultAndBestMarked) {
  REPORT_REQUIRE_DATABASE();
  std::string section = Section(Render(database), database.gelu_fingerprint);
  ASSERT_FALSE(section.empty());
  // Ten configs, four failed: six bars, fastest first (the bars' heights only grow).
  std::regex bar("<rect class=\"bar([a-z ]*)\" x=\"[0-9.]+\" y=\"([0-9.]+)\"");
  std::vector<double> tops;
  int defaults = 0;
  int best = 0;
  for (std::sregex_iterator it(section.begin(), section.end(), bar), end; it != end; ++it) {
    tops.push_back(std::stod((*it)[2]));
    defaults += (*it)[1].str().find("default") != std::string::npos;
    best += (*it)[1].str().find("best") != std::string::npos;
  }
  ASSERT_EQ(tops.size(), 6u);
  for (size_t i = 1; i < tops.size(); ++i) EXPECT_LE(tops[i], tops[i - 1]) << "bar " << i;
  EXPECT_EQ(defaults, 1);
  EXPECT_EQ(best, 1);
  // The best-so-far curve: one dot per verified trial, a cross per failed one, a step line.
  EXPECT_EQ(Count(section, "<circle class=\"trial"), 6);
  EXPECT_EQ(Count(section, "<path class=\"fail fail-"), 4);
  EXPECT_EQ(Count(section, "<path class=\"best-line\""), 1);
  std::string small = Section(Render(database), database.small_fingerprint);
  EXPECT_NE(small.find("No failed trials."), std::string::npos);
  EXPECT_EQ(Count(small, "<rect class=\"bar"), 6);
}

TEST(ReportTest, RealWorkerFailuresAreMarkedByClass) {
  REPORT_REQUIRE_DATABASE();
  std::string section = Section(Render(database), database.gelu_fingerprint);
  EXPECT_NE(section.find("Failed trials by class (4 of 10)"), std::string::npos);
  for (const char* status : {"crash", "red_zone", "wrong_result", "timeout"}) {
    EXPECT_EQ(Count(section, std::string("<rect class=\"fail fail-") + status + "\""), 1) << status;
  }
  EXPECT_EQ(Count(section, "<rect class=\"fail fail-compile\""), 0);
}

TEST(ReportTest, HeatMapOnlyForATwoParameterSpace) {
  REPORT_REQUIRE_DATABASE();
  std::string page = Render(database);
  std::string small = Section(page, database.small_fingerprint);
  std::string gelu = Section(page, database.gelu_fingerprint);
  std::string hostile = Section(page, database.hostile_fingerprint);
  ASSERT_FALSE(small.empty());
  // chunks (1, 2, 4) across, vector (1, 2) up: six measured cells, none empty.
  EXPECT_EQ(Count(small, "class=\"chart heat-map\""), 1);
  EXPECT_NE(small.find("Median time over chunks and vector"), std::string::npos);
  EXPECT_EQ(Count(small, "<rect class=\"cell\""), 6);
  EXPECT_EQ(Count(small, "<rect class=\"cell empty\""), 0);
  EXPECT_EQ(Count(gelu, "class=\"chart heat-map\""), 0);
  EXPECT_EQ(Count(gelu, "class=\"cell"), 0);
  EXPECT_NE(gelu.find("vary in 3 parameter(s) (chunks, threads_per_block, vector)"),
            std::string::npos);
  EXPECT_EQ(Count(hostile, "class=\"chart heat-map\""), 0);
}

TEST(ReportTest, FailuresAreShownSeparatelyByClass) {
  REPORT_REQUIRE_DATABASE();
  std::string section = Section(Render(database), database.hostile_fingerprint);
  ASSERT_FALSE(section.empty());
  EXPECT_NE(section.find("Failed trials by class (7 of 10)"), std::string::npos);
  for (const char* status : {"compile", "launch", "crash", "red_zone", "wrong_result"}) {
    std::string mark = std::string("class=\"fail fail-") + status + "\"";
    // One mark in the class strip, one cross on the best-so-far chart's axis.
    EXPECT_EQ(Count(section, "<rect " + mark), 1) << status;
    EXPECT_EQ(Count(section, "<path " + mark), 1) << status;
    EXPECT_NE(section.find(std::string("<td class=\"status fail-") + status + "\">" + status),
              std::string::npos)
        << status;
  }
  EXPECT_EQ(Count(section, "<rect class=\"fail fail-timeout\""), 2);
  EXPECT_EQ(Count(section, "<rect class=\"fail fail-constraint\""), 0);
  EXPECT_NE(section.find("still running after 5000 ms"), std::string::npos);
  // Failed configs are not bars: three verified configs, three bars.
  EXPECT_EQ(Count(section, "<rect class=\"bar"), 3);
  EXPECT_EQ(Count(section, "<tr class=\"fail-row\">"), 6);
}

TEST(ReportTest, UserTextIsEscaped) {
  REPORT_REQUIRE_DATABASE();
  std::string page = Render(database);
  EXPECT_NE(page.find("evil &lt;&amp;&gt; &quot;kernel&quot; &#39;x&#39; "
                      "&lt;script&gt;alert(1)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_EQ(page.find("<&>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("</svg><b>"), std::string::npos);
  EXPECT_NE(page.find("&lt;/svg&gt;&lt;b&gt;&amp;amp;"), std::string::npos);
  EXPECT_NE(page.find("LLVM ERROR: &lt;unsupported&gt; &amp; broken"), std::string::npos);
  EXPECT_EQ(Count(page, "<svg "), Count(page, "</svg>"));
}

TEST(ReportTest, IsSelfContained) {
  REPORT_REQUIRE_DATABASE();
  std::string page = Render(database);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  std::regex href("href=\"([^\"]*)\"");
  int links = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), href), end; it != end; ++it) {
    std::string target = (*it)[1];
    EXPECT_TRUE(target.starts_with("#f-")) << target;
    // Every in-page link lands on an element of the page.
    EXPECT_NE(page.find("id=\"" + target.substr(1) + "\""), std::string::npos) << target;
    ++links;
  }
  EXPECT_EQ(links, 3);
}

TEST(ReportTest, OneFingerprintOrOneDevice) {
  REPORT_REQUIRE_DATABASE();
  ReportOptions options;
  options.fingerprint = database.small_fingerprint;
  std::string page = Render(database, options);
  EXPECT_EQ(Count(page, "<section class=\"fusion\""), 1);
  EXPECT_FALSE(Section(page, database.small_fingerprint).empty());
  EXPECT_EQ(page.find(database.gelu_fingerprint), std::string::npos);

  options = {};
  options.device_key = "cuda:sm_90, nothing measured here";
  page = Render(database, options);
  EXPECT_EQ(Count(page, "<section class=\"fusion\""), 0);
  EXPECT_NE(page.find("No measurements match."), std::string::npos);

  auto store = db::SqliteStore::Open(database.db());
  ASSERT_TRUE(store.has_value());
  options = {};
  options.fingerprint = std::string(64, 'a');
  auto missing = RenderReport(**store, options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(ReportCommandTest, WritesTheFileAndRefusesBadArguments) {
  REPORT_REQUIRE_DATABASE();
  const std::string cli = TILESMITH_CLI;
  CommandRun run = Shell(database.dir(), cli + " report --db results.db --out all.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("wrote all.html"), std::string::npos) << run.out;
  std::string page = ReadFile(database.dir() + "/all.html");
  EXPECT_EQ(Count(page, "<section class=\"fusion\""), 3);
  EXPECT_NE(page.find("from results.db"), std::string::npos);

  run = Shell(database.dir(), cli + " report --db results.db --device host --fingerprint " +
                                  database.small_fingerprint.substr(0, 8) + " --out -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Count(run.out, "<section class=\"fusion\""), 1);
  EXPECT_EQ(Count(run.out, "class=\"chart heat-map\""), 1);

  run = Shell(database.dir(), cli + " report --db results.db");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--out"), std::string::npos) << run.err;
  run = Shell(database.dir(), cli + " report --db results.db --fingerprint 0123456789 --out x");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("0123456789"), std::string::npos) << run.err;
  run = Shell(database.dir(), cli + " report --db missing.db --out x.html");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("missing.db"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(database.dir() + "/missing.db"));
  EXPECT_FALSE(std::filesystem::exists(database.dir() + "/x.html"));
}

}  // namespace
}  // namespace tilesmith::report::testing
