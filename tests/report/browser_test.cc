// The report in a real browser: headless Chromium (Debian's `chromium`, installed by
// scripts/bootstrap --tests) loads the page written by `tilesmith report`, with no console message
// from the page, and its screenshot holds far more than a blank page's. Skipped, saying so,
// where chromium is not on PATH.
#include <gtest/gtest.h>

#include <filesystem>

#include "report_test_util.h"

namespace tilesmith::report::testing {
namespace {

namespace fs = std::filesystem;

bool HaveChromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

// Chromium's flags for one headless run in its own profile, bounded in time.
std::string Chromium(const std::string& dir, const std::string& action) {
  return "timeout 60 chromium --headless=new --disable-gpu --no-sandbox --enable-logging=stderr "
         "--v=0 --window-size=1200,2000 --user-data-dir='" +
         dir + "/profile' " + action;
}

// Lines of Chromium's log about the page's console (errors, uncaught exceptions, warnings).
std::vector<std::string> ConsoleLines(const std::string& log, const std::string& url) {
  std::vector<std::string> lines;
  std::stringstream stream(log);
  for (std::string line; std::getline(stream, line);) {
    bool console = line.find("CONSOLE") != std::string::npos;
    if ((console && line.find(url) != std::string::npos) ||
        line.find("Uncaught") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

TEST(BrowserTest, HeadlessChromiumLoadsTheReportCleanly) {
  if (!HaveChromium()) {
    GTEST_SKIP() << "chromium is not on PATH (scripts/bootstrap --tests installs it)";
  }
  REPORT_REQUIRE_DATABASE();
  const std::string dir = database.dir();
  CommandRun written =
      Shell(dir, std::string(TILESMITH_CLI) + " report --db results.db --out browser.html");
  ASSERT_EQ(written.exit_code, 0) << written.err;
  {
    std::ofstream blank(dir + "/blank.html");
    blank << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body></body></html>\n";
  }
  const std::string url = "file://" + fs::canonical(dir + "/browser.html").string();
  const std::string blank_url = "file://" + fs::canonical(dir + "/blank.html").string();
  fs::remove(dir + "/report.png");
  fs::remove(dir + "/blank.png");

  CommandRun shot =
      Shell(dir, Chromium(dir, "--screenshot='" + dir + "/report.png' '" + url + "'"));
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  std::vector<std::string> console = ConsoleLines(shot.err, url);
  EXPECT_TRUE(console.empty()) << console.front();
  CommandRun blank =
      Shell(dir, Chromium(dir, "--screenshot='" + dir + "/blank.png' '" + blank_url + "'"));
  ASSERT_EQ(blank.exit_code, 0) << blank.err;

  ASSERT_TRUE(fs::exists(dir + "/report.png"));
  ASSERT_TRUE(fs::exists(dir + "/blank.png"));
  std::string png = ReadFile(dir + "/report.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
  auto report_bytes = fs::file_size(dir + "/report.png");
  auto blank_bytes = fs::file_size(dir + "/blank.png");
  // A blank 1200x2000 page compresses to about 11 KB; text, tables and charts do not.
  EXPECT_GT(report_bytes, 3 * blank_bytes) << report_bytes << " vs blank " << blank_bytes;

  // The DOM the browser built keeps every chart: the markup parsed as written.
  CommandRun dom = Shell(dir, Chromium(dir, "--dump-dom '" + url + "'"));
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  std::string page = ReadFile(dir + "/browser.html");
  EXPECT_EQ(Count(dom.out, "<svg "), Count(page, "<svg "));
  EXPECT_EQ(Count(dom.out, "<section class=\"fusion\""), 3);
  EXPECT_EQ(Count(dom.out, "<script"), 0);
  console = ConsoleLines(dom.err, url);
  EXPECT_TRUE(console.empty()) << console.front();
}

// The check itself can fail: a page that throws is caught.
TEST(BrowserTest, AConsoleErrorIsSeen) {
  if (!HaveChromium()) {
    GTEST_SKIP() << "chromium is not on PATH (scripts/bootstrap --tests installs it)";
  }
  db::testing::TempDir temp;
  std::string dir = temp.File("");
  {
    std::ofstream bad(dir + "/bad.html");
    bad << "<!DOCTYPE html><html><body><script>notAFunction()</script></body></html>\n";
  }
  const std::string url = "file://" + fs::canonical(dir + "/bad.html").string();
  CommandRun run = Shell(dir, Chromium(dir, "--dump-dom '" + url + "'"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(ConsoleLines(run.err, url).empty()) << run.err;
}

}  // namespace
}  // namespace tilesmith::report::testing
