// A thin RAII layer over the SQLite C API for db/: statements, errors as values that name
// the database file, and write transactions that retry while another process holds the lock.
// Private to db/ (and its tests).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "support/status.h"

namespace tilesmith::db::sqlite {

class Connection;

/// A prepared statement. Binds are 1-based, columns 0-based, as in SQLite.
class Statement {
 public:
  Statement(sqlite3_stmt* statement, Connection* connection)
      : statement_(statement), connection_(connection) {}
  /// A statement of the connection's cache: rewound and handed back, not finalised.
  Statement(sqlite3_stmt* statement, Connection* connection, std::string cached_sql)
      : statement_(statement), connection_(connection), cached_sql_(std::move(cached_sql)) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::nullopt_t);
  Statement& Bind(int index, const std::optional<double>& value);
  /// Binds `values` to parameters 1, 2, … in order.
  template <typename... T>
  Statement& BindAll(const T&... values) {
    int index = 1;
    (Bind(index++, values), ...);
    return *this;
  }

  /// Advances; true when a row is ready, false when done.
  Expected<bool> Step();
  /// Steps to the end, for statements that return no rows.
  Status Run();
  /// Clears bindings and rewinds, to run the statement again.
  void Reset();

  std::string Text(int column) const;
  int64_t Int(int column) const;
  double Double(int column) const;
  std::optional<double> OptionalDouble(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3_stmt* statement_;
  Connection* connection_;
  std::string cached_sql_;  // non-empty: return to the connection's cache when done
  int bind_error_ = SQLITE_OK;
};

/// How a database file is opened.
enum class OpenMode {
  kCreate,     ///< Read-write; creates the file when missing.
  kReadWrite,  ///< Read-write; a missing file is an error.
  kReadOnly,   ///< Never writes (no migration, no WAL switch).
};

/// One SQLite connection. Not for concurrent use: the owner serialises calls.
class Connection {
 public:
  /// Opens `path` with foreign keys on and a busy timeout; writable connections use WAL with
  /// synchronous=FULL so a committed transaction survives a crash or power loss.
  static Expected<std::unique_ptr<Connection>> Open(const std::string& path, OpenMode mode,
                                                    int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs SQL text (one or more statements) that returns no rows.
  Status Execute(std::string_view sql);
  Expected<Statement> Prepare(std::string_view sql);
  /// As Prepare, for SQL run again and again (a lookup per request): the compiled statement
  /// is kept and reused, which saves SQLite's parse and planning on each call.
  Expected<Statement> PrepareCached(const std::string& sql);
  /// The first column of the first row of `sql`, which must return one.
  Expected<int64_t> QueryInt(std::string_view sql);

  /// Runs `body` inside BEGIN IMMEDIATE … COMMIT. On failure rolls back and returns the
  /// error, prefixed with `what`. While another process holds the write lock past the busy
  /// timeout, the whole transaction is retried a few times with backoff.
  Status WriteTransaction(std::string_view what, const std::function<Status()>& body);

  /// An error for SQLite result `rc`, naming the file and SQLite's own message.
  Error ErrorFor(int rc, std::string_view doing = "");

  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  bool read_only() const { return read_only_; }

 private:
  Connection(sqlite3* db, std::string path, bool read_only)
      : db_(db), path_(std::move(path)), read_only_(read_only) {}
  Status RunTransactionOnce(const std::function<Status()>& body);

  friend class Statement;
  void ReturnToCache(const std::string& sql, sqlite3_stmt* statement);

  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cached_;  // idle cached statements
  std::string path_;
  bool read_only_;
  bool last_error_busy_ = false;  // set by ErrorFor; decides whether a retry may help
};

}  // namespace tilesmith::db::sqlite
