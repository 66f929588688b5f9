// `tilesmith report`: the tuning report (report/report.h) as one self-contained HTML file.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "db/open_store.h"
#include "report/report.h"
#include "support/atomic_file.h"
#include "support/log.h"
#include "tools/commands.h"
#include "tools/tune_support.h"

namespace tilesmith::tools {
namespace {

// --db, else $TILESMITH_DB, else ./tilesmith.db (as `tilesmith db`).
std::string DatabasePath(const cli::Args& args) { return ResolveDbPath(args.Get("db", "")); }

int Run(const cli::Args& args) {
  if (!args.positionals().empty()) {
    ReportError("'report' takes no arguments (the database is --db PATH)");
    return kExitUsage;
  }
  if (!args.Has("out")) {
    ReportError("'report' needs --out FILE (or --out - for stdout)");
    return kExitUsage;
  }
  std::string path = DatabasePath(args);
  auto store = db::OpenStore(path, db::StoreAccess::kReadOnly);
  if (!store) return ReportError(store.error().message);
  report::ReportOptions report_options;
  report_options.source = db::DescribeLocation(path);
  if (args.Has("fingerprint")) {
    auto fingerprint = db::ResolveFingerprint(**store, args.Get("fingerprint"));
    if (!fingerprint) return ReportError(fingerprint.error().message);
    report_options.fingerprint = *fingerprint;
  }
  if (args.Has("device")) {
    auto device = db::ResolveDeviceKey(**store, args.Get("device"));
    if (!device) return ReportError(device.error().message);
    report_options.device_key = *device;
  }
  if (args.Has("compiler-version")) report_options.compiler_version = args.Get("compiler-version");
  auto page = report::RenderReport(**store, report_options);
  if (!page) return ReportError(page.error().message);
  const std::string& out = args.Get("out");
  if (out == "-") {
    std::cout << *page;
    return kExitOk;
  }
  Status written = WriteFileAtomically(out, *page);
  if (!written) return ReportError(written.error().message);
  std::cout << "wrote " << out << " (" << page->size() << " bytes)\n";
  return kExitOk;
}

}  // namespace

Subcommand ReportSubcommand() {
  cli::Command command(
      "report", "write the tuning report: one self-contained HTML page with charts",
      "--out FILE [--db PATH] [--fingerprint F] [--device KEY] [--compiler-version V]");
  command.Flag("out", "FILE", "the HTML file to write (- for stdout)")
      .Flag("db", "PATH|URL",
            "the database: a SQLite file or a postgresql:// URL (default: $TILESMITH_DB, else "
            "./tilesmith.db)")
      .Flag("fingerprint", "F", "only this fusion (a unique prefix of 6+ hex digits will do)")
      .Flag("device", "KEY",
            "only this device: a full key, a unique prefix (host, cuda:sm_90) "
            "or a name")
      .Flag("compiler-version", "V", "only results of this compiler version")
      .Epilog(
          "The page has no scripts and loads nothing: inline CSS and SVG only. It shows a\n"
          "summary over every fusion (table, speedup chart) and, per fusion, the median time\n"
          "of every verified config sorted (default and best highlighted), failed trials by\n"
          "class, the best time so far over the trials in measurement order and, when the\n"
          "verified configs vary in exactly two numeric parameters, a heat map over them.\n"
          "Hover over a bar, dot or cell for its config and timings.\n\n"
          "Examples:\n"
          "  tilesmith report --db tune.db --out report.html\n"
          "  tilesmith report --fingerprint 3fa94c --device host --out gelu.html");
  return {std::move(command), &Run};
}

}  // namespace tilesmith::tools
