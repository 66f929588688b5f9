// A thin RAII layer over libpq for db/: one connection, parameterised statements only
// (PQexecParams; values never enter the SQL text), results read as text, errors as values
// that name the server (host, port, database) but never the password, and transactions that
// are retried when PostgreSQL reports a serialization failure or a deadlock. Private to db/
// (and its tests).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace tilesmith::db::postgres {

/// The values of one statement's $1, $2, …, as text (NULL where unset).
class Params {
 public:
  Params& Add(std::string_view text);
  Params& Add(const std::string& text) { return Add(std::string_view(text)); }
  Params& Add(const char* text) { return Add(std::string_view(text)); }
  Params& Add(int64_t value);
  Params& Add(int value) { return Add(static_cast<int64_t>(value)); }
  Params& Add(double value);
  Params& Add(bool value);
  Params& Add(std::nullopt_t);
  Params& Add(const std::optional<double>& value);
  /// Adds `values` in order.
  template <typename... T>
  Params& AddAll(const T&... values) {
    (Add(values), ...);
    return *this;
  }
  size_t size() const { return values_.size(); }
  const std::vector<std::optional<std::string>>& values() const { return values_; }

 private:
  std::vector<std::optional<std::string>> values_;
};

/// The rows of one statement, columns 0-based.
class Result {
 public:
  explicit Result(PGresult* result);
  Result(Result&& other) noexcept;
  Result& operator=(Result&&) = delete;
  ~Result();

  int rows() const;
  /// Rows the statement changed (INSERT, UPDATE, DELETE).
  int64_t affected() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;
  double Double(int row, int column) const;
  std::optional<double> OptionalDouble(int row, int column) const;
  bool Bool(int row, int column) const;

 private:
  PGresult* result_;
};

/// One libpq connection. Not for concurrent use: the owner serialises calls.
class Connection {
 public:
  /// Connects with `url` (`postgresql://user@host:port/dbname?…`), handed to libpq as it is,
  /// so libpq's environment variables, password file and options all apply. An unreachable
  /// server is an error naming host, port and database with libpq's reason.
  static Expected<std::unique_ptr<Connection>> Open(const std::string& url);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs one statement with its parameters. A text value holding a NUL byte (which
  /// PostgreSQL text cannot hold) is refused rather than cut short.
  Expected<Result> Execute(std::string_view sql, const Params& params = {});
  /// The first column of the first row, as an integer.
  Expected<int64_t> QueryInt(std::string_view sql, const Params& params = {});

  /// Runs `body` inside BEGIN … COMMIT. On failure rolls back and returns the error,
  /// prefixed with `what`. A serialization failure or deadlock retries the whole body.
  Status Transaction(std::string_view what, const std::function<Status()>& body);

  /// `host:port/dbname` of the server, for messages (no user, no password).
  const std::string& where() const { return where_; }

 private:
  Connection(PGconn* connection, std::string where)
      : connection_(connection), where_(std::move(where)) {}
  Status Reconnect();

  PGconn* connection_;
  std::string where_;
  std::string last_state_;  // SQLSTATE of the last failed statement
  bool in_transaction_ = false;
};

/// Whether `location` names a PostgreSQL database: `postgresql://…` or `postgres://…`.
bool IsUrl(std::string_view location);

/// The URL without its password (`postgresql://user@host:port/db`), for logs and messages.
std::string RedactedUrl(std::string_view url);

}  // namespace tilesmith::db::postgres
