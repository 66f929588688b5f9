// A private PostgreSQL server for tests: one per test process, started on first use and
// stopped when the process ends, however it ends, with a fresh database for every store a
// test asks for. Any test binary that links tilesmith_db can include this.
//
// The server is PostgreSQL 15's own binaries (`initdb`, `pg_ctl`; $TILESMITH_POSTGRES_BIN,
// else /usr/lib/postgresql/15/bin) on a free port of 127.0.0.1, its data in a new folder
// under the temp dir. PostgreSQL refuses to run as root, so as root every server command runs
// as the `postgres` user (`runuser -u postgres`). A watchdog process holds the read end of a
// pipe only this process writes: when the process exits — normally, on a failed assertion or
// killed — the pipe closes and the watchdog stops exactly this server and removes its folder.
//
// $TILESMITH_TEST_POSTGRES_URL (a URL to an existing server's `postgres` database, whose user
// may create databases) uses that server instead of starting one; so does the URL in the file
// $TILESMITH_TEST_POSTGRES_URL_FILE names, which ctest's `postgres` fixture writes
// (scripts/private-postgres) so that the tests of one run, each its own process,
// share one server. Where that file is missing (no server binaries), the process starts its
// own as above, or skips.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include "db/postgres_connection.h"
#include "support/status.h"

extern char** environ;

namespace tilesmith::db::testing {

class PostgresTestServer {
 public:
  /// The process's server, started on the first call; null when none can run here, with
  /// the reason in `why_not` (for GTEST_SKIP).
  static PostgresTestServer* Get(std::string* why_not) {
    static std::mutex mutex;
    static std::unique_ptr<PostgresTestServer> server;
    static std::string failure;
    std::lock_guard lock(mutex);
    if (!server && failure.empty()) {
      auto started = Start();
      if (started) {
        server = std::move(*started);
      } else {
        failure = started.error().message;
      }
    }
    if (!server) *why_not = failure;
    return server.get();
  }

  /// A new, empty database on the server; its URL.
  Expected<std::string> NewDatabase() {
    static std::atomic<int> counter = 0;
    std::string name =
        "tilesmith_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    TS_ASSIGN_OR_RETURN(auto admin, postgres::Connection::Open(admin_url_));
    // A name cannot be a parameter; this one is made of digits and letters above.
    TS_ASSIGN_OR_RETURN(postgres::Result created, admin->Execute("CREATE DATABASE " + name));
    return base_url_ + name;
  }

  ~PostgresTestServer() {
    if (watchdog_write_ >= 0) close(watchdog_write_);
    if (watchdog_ > 0) waitpid(watchdog_, nullptr, 0);  // the server is stopped when it returns
  }

 private:
  PostgresTestServer() = default;

  static Expected<std::unique_ptr<PostgresTestServer>> Start() {
    auto server = std::unique_ptr<PostgresTestServer>(new PostgresTestServer());
    std::string shared;
    if (const char* url = std::getenv("TILESMITH_TEST_POSTGRES_URL"); url && *url) shared = url;
    if (const char* file = std::getenv("TILESMITH_TEST_POSTGRES_URL_FILE"); file && *file) {
      std::ifstream in(file);
      std::getline(in, shared);
    }
    if (!shared.empty()) {
      server->admin_url_ = shared;
      server->base_url_ = shared.substr(0, shared.rfind('/') + 1);
      return server;
    }
    const char* bin_env = std::getenv("TILESMITH_POSTGRES_BIN");
    std::string bin = bin_env && *bin_env ? bin_env : "/usr/lib/postgresql/15/bin";
    for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
      if (access((bin + "/" + tool).c_str(), X_OK) != 0) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "no PostgreSQL server binaries: " + bin + "/" + tool +
                             " is missing (install postgresql-15, or set "
                             "TILESMITH_POSTGRES_BIN or TILESMITH_TEST_POSTGRES_URL)");
      }
    }
    std::string as_postgres;
    uid_t owner = geteuid();
    if (owner == 0) {
      passwd* user = getpwnam("postgres");
      if (user == nullptr || access("/usr/sbin/runuser", X_OK) != 0) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "running as root, and PostgreSQL refuses root: needs the 'postgres' "
                         "user and runuser");
      }
      owner = user->pw_uid;
      as_postgres = "/usr/sbin/runuser -u postgres -- ";
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "tilesmith_pg_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return MakeError(ErrorCode::kIo, "cannot make a folder for the PostgreSQL server");
    }
    const std::string dir = pattern;
    if (chown(dir.c_str(), owner, static_cast<gid_t>(-1)) != 0) {
      std::filesystem::remove_all(dir);
      return MakeError(ErrorCode::kIo, "cannot give " + dir + " to the postgres user");
    }
    // The watchdog first, so that even a start that fails half-way is cleaned up.
    TS_RETURN_IF_ERROR(server->StartWatchdog(
        as_postgres + bin + "/pg_ctl -D " + dir + "/data -m fast -w stop", dir));
    std::string initdb = as_postgres + bin + "/initdb -D " + dir +
                         "/data -A trust -U tilesmith -E UTF8 --no-sync > " + dir +
                         "/initdb.log 2>&1";
    if (std::system(initdb.c_str()) != 0) {
      return MakeError(ErrorCode::kFailedPrecondition, "initdb failed; see " + dir + "/initdb.log");
    }
    // A port another process takes between here and the start fails the start: try again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      int port = FreePort();
      // fsync off: a test server's data dies with it, and syncing only costs time.
      std::string start = as_postgres + bin + "/pg_ctl -D " + dir + "/data -l " + dir +
                          "/server.log -w -o \"-p " + std::to_string(port) + " -k " + dir +
                          " -c listen_addresses=127.0.0.1 -c fsync=off -c "
                          "synchronous_commit=off -c full_page_writes=off\" start > /dev/null";
      if (port > 0 && std::system(start.c_str()) == 0) {
        server->base_url_ = "postgresql://tilesmith@127.0.0.1:" + std::to_string(port) + "/";
        server->admin_url_ = server->base_url_ + "postgres";
        return server;
      }
    }
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the PostgreSQL server would not start; see " + dir + "/server.log");
  }

  // A port free on 127.0.0.1 now.
  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    int port = 0;
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port = ntohs(address.sin_port);
    }
    if (fd >= 0) close(fd);
    return port;
  }

  // A shell in its own session that waits for this process's end (EOF on its stdin), then
  // runs `stop` and removes `dir`.
  Status StartWatchdog(const std::string& stop, const std::string& dir) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return MakeError(ErrorCode::kIo, "pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
    std::string script = "cat > /dev/null; if [ -d " + dir + "/data ]; then " + stop +
                         " > /dev/null 2>&1; fi; rm -rf " + dir;
    const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    int spawned = posix_spawn(&watchdog_, "/bin/sh", &actions, &attributes,
                              const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(fds[0]);
    if (spawned != 0) {
      close(fds[1]);
      std::filesystem::remove_all(dir);
      return MakeError(ErrorCode::kIo, "cannot start the PostgreSQL watchdog");
    }
    watchdog_write_ = fds[1];
    return OkStatus();
  }

  std::string base_url_;   // ends in '/': a database name completes it
  std::string admin_url_;  // the `postgres` database, for CREATE DATABASE
  pid_t watchdog_ = -1;
  int watchdog_write_ = -1;
};

}  // namespace tilesmith::db::testing
