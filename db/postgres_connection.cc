#include "db/postgres_connection.h"

#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <cstring>

namespace tilesmith::db::postgres {
namespace {

// PostgreSQL's codes for a transaction that lost a race and may simply be run again.
constexpr std::string_view kSerializationFailure = "40001";
constexpr std::string_view kDeadlockDetected = "40P01";
constexpr int kTransactionAttempts = 5;

// libpq reports NOTICEs (a CREATE … IF NOT EXISTS that found the table) on stderr unless
// told otherwise; they are not errors.
void IgnoreNotice(void*, const char*) {}

std::string TrimmedMessage(const char* message) {
  std::string text = message == nullptr ? "" : message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string Where(PGconn* connection) {
  const char* host = PQhost(connection);
  const char* port = PQport(connection);
  const char* name = PQdb(connection);
  return std::string(host && *host ? host : "localhost") + ":" + (port && *port ? port : "5432") +
         "/" + (name ? name : "");
}

}  // namespace

Params& Params::Add(std::string_view text) {
  values_.emplace_back(std::string(text));
  return *this;
}

Params& Params::Add(int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}

Params& Params::Add(double value) {
  // Shortest text that reads back as the same double.
  char text[32];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  values_.emplace_back(std::string(text, error == std::errc() ? end : text));
  return *this;
}

Params& Params::Add(bool value) {
  values_.emplace_back(value ? "true" : "false");
  return *this;
}

Params& Params::Add(std::nullopt_t) {
  values_.emplace_back(std::nullopt);
  return *this;
}

Params& Params::Add(const std::optional<double>& value) {
  return value ? Add(*value) : Add(std::nullopt);
}

Result::Result(PGresult* result) : result_(result) {}
Result::Result(Result&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
Result::~Result() {
  if (result_ != nullptr) PQclear(result_);
}

int Result::rows() const { return PQntuples(result_); }

int64_t Result::affected() const {
  const char* count = PQcmdTuples(result_);
  int64_t value = 0;
  if (count != nullptr) std::from_chars(count, count + std::strlen(count), value);
  return value;
}

bool Result::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) == 1; }

std::string Result::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<size_t>(PQgetlength(result_, row, column)));
}

int64_t Result::Int(int row, int column) const {
  const char* text = PQgetvalue(result_, row, column);
  int64_t value = 0;
  std::from_chars(text, text + PQgetlength(result_, row, column), value);
  return value;
}

double Result::Double(int row, int column) const {
  std::string text = Text(row, column);
  if (text == "NaN") return std::nan("");
  if (text == "Infinity") return HUGE_VAL;
  if (text == "-Infinity") return -HUGE_VAL;
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::optional<double> Result::OptionalDouble(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Double(row, column);
}

bool Result::Bool(int row, int column) const {
  return PQgetlength(result_, row, column) > 0 && PQgetvalue(result_, row, column)[0] == 't';
}

Expected<std::unique_ptr<Connection>> Connection::Open(const std::string& url) {
  PGconn* connection = PQconnectdb(url.c_str());
  if (connection == nullptr) {
    return MakeError(ErrorCode::kResourceExhausted, "cannot allocate a PostgreSQL connection");
  }
  std::string where = Where(connection);
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string reason = TrimmedMessage(PQerrorMessage(connection));
    PQfinish(connection);
    return MakeError(ErrorCode::kFailedPrecondition,
                     "cannot connect to PostgreSQL at " + where + ": " + reason);
  }
  PQsetNoticeProcessor(connection, &IgnoreNotice, nullptr);
  auto opened = std::unique_ptr<Connection>(new Connection(connection, std::move(where)));
  // Doubles must read back bit for bit whatever the server's default: any value above 0
  // selects PostgreSQL's shortest exact output.
  TS_RETURN_IF_ERROR(opened->Execute("SET extra_float_digits = 3"));
  return opened;
}

Connection::~Connection() { PQfinish(connection_); }

Status Connection::Reconnect() {
  if (PQstatus(connection_) == CONNECTION_OK) return OkStatus();
  PQreset(connection_);
  if (PQstatus(connection_) != CONNECTION_OK) {
    // kIo: the server may be restarting; callers that can wait (agents) retry.
    return MakeError(ErrorCode::kIo, "lost the connection to PostgreSQL at " + where_ + ": " +
                                         TrimmedMessage(PQerrorMessage(connection_)));
  }
  PQsetNoticeProcessor(connection_, &IgnoreNotice, nullptr);
  TS_RETURN_IF_ERROR(Execute("SET extra_float_digits = 3"));
  return OkStatus();
}

Expected<Result> Connection::Execute(std::string_view sql, const Params& params) {
  // A statement outside a transaction finds a connection the server dropped (a restart)
  // and connects again; inside one, the transaction is lost and Transaction retries it.
  if (!in_transaction_ && PQstatus(connection_) != CONNECTION_OK) {
    TS_RETURN_IF_ERROR(Reconnect());
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::optional<std::string>& value : params.values()) {
    if (value && value->find('\0') != std::string::npos) {
      return InvalidArgument("parameter " + std::to_string(values.size() + 1) +
                             " holds a NUL byte, which PostgreSQL text cannot store");
    }
    values.push_back(value ? value->c_str() : nullptr);
  }
  std::string text(sql);
  PGresult* raw = PQexecParams(connection_, text.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
  Result result(raw);
  ExecStatusType status = raw == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(raw);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    last_state_.clear();
    return result;
  }
  const char* state = raw == nullptr ? nullptr : PQresultErrorField(raw, PG_DIAG_SQLSTATE);
  last_state_ = state == nullptr ? "" : state;
  std::string message =
      TrimmedMessage(raw != nullptr ? PQresultErrorMessage(raw) : PQerrorMessage(connection_));
  if (PQstatus(connection_) != CONNECTION_OK) {
    return MakeError(ErrorCode::kIo, "PostgreSQL at " + where_ + ": " + message);
  }
  return MakeError(ErrorCode::kFailedPrecondition, "PostgreSQL at " + where_ + ": " + message);
}

Expected<int64_t> Connection::QueryInt(std::string_view sql, const Params& params) {
  TS_ASSIGN_OR_RETURN(Result result, Execute(sql, params));
  if (result.rows() < 1 || result.IsNull(0, 0)) {
    return MakeError(ErrorCode::kInternal,
                     "PostgreSQL query returned no value: " + std::string(sql.substr(0, 60)));
  }
  return result.Int(0, 0);
}

Status Connection::Transaction(std::string_view what, const std::function<Status()>& body) {
  for (int attempt = 1;; ++attempt) {
    TS_RETURN_IF_ERROR(Reconnect());
    Status done = [&]() -> Status {
      TS_RETURN_IF_ERROR(Execute("BEGIN"));
      in_transaction_ = true;
      TS_RETURN_IF_ERROR(body());
      TS_ASSIGN_OR_RETURN(Result committed, Execute("COMMIT"));
      return OkStatus();
    }();
    in_transaction_ = false;
    if (done) return OkStatus();
    bool retry = last_state_ == kSerializationFailure || last_state_ == kDeadlockDetected;
    if (PQstatus(connection_) == CONNECTION_OK) (void)Execute("ROLLBACK");
    if (!retry || attempt == kTransactionAttempts) {
      return std::unexpected(done.error().WithContext(what));
    }
  }
}

bool IsUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string RedactedUrl(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  size_t authority = scheme_end + 3;
  size_t path = url.find_first_of("/?", authority);
  std::string_view host_part = url.substr(authority, path - authority);
  std::string out(url.substr(0, authority));
  size_t at = host_part.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view user = host_part.substr(0, at);
    out += std::string(user.substr(0, user.find(':'))) + "@";
    host_part = host_part.substr(at + 1);
  }
  out += host_part;
  if (path == std::string_view::npos) return out;
  std::string_view rest = url.substr(path);
  size_t query = rest.find('?');
  out += rest.substr(0, query);
  if (query == std::string_view::npos) return out;
  // Keep the options, drop any password given as one.
  std::string kept;
  std::string_view options = rest.substr(query + 1);
  while (!options.empty()) {
    size_t amp = options.find('&');
    std::string_view option = options.substr(0, amp);
    if (!option.starts_with("password=")) kept += (kept.empty() ? "" : "&") + std::string(option);
    if (amp == std::string_view::npos) break;
    options = options.substr(amp + 1);
  }
  if (!kept.empty()) out += "?" + kept;
  return out;
}

}  // namespace tilesmith::db::postgres
