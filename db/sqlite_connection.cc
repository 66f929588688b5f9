#include "db/sqlite_connection.h"

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

namespace tilesmith::db::sqlite {
namespace {

// Extra whole-transaction attempts after SQLite's own busy handler has given up.
constexpr int kBusyRetries = 5;

ErrorCode CodeFor(int rc) {
  switch (rc & 0xFF) {
    case SQLITE_FULL:
      return ErrorCode::kResourceExhausted;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return ErrorCode::kInvalidArgument;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
      return ErrorCode::kIo;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return ErrorCode::kFailedPrecondition;
    default:
      return ErrorCode::kInternal;
  }
}

// A word on what to do, for the failures a user can fix.
std::string_view HintFor(int rc) {
  switch (rc & 0xFF) {
    case SQLITE_FULL:
      return " (free disk space, then rerun: committed results are kept)";
    case SQLITE_READONLY:
      return " (the file or its directory is not writable)";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return " (another process held the write lock past the busy timeout)";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return " (not a readable SQLite database)";
    default:
      return "";
  }
}

}  // namespace

Statement::Statement(Statement&& other) noexcept
    : statement_(other.statement_),
      connection_(other.connection_),
      cached_sql_(std::move(other.cached_sql_)),
      bind_error_(other.bind_error_) {
  other.statement_ = nullptr;
}

Statement::~Statement() {
  if (statement_ != nullptr && !cached_sql_.empty()) {
    connection_->ReturnToCache(cached_sql_, statement_);
    return;
  }
  sqlite3_finalize(statement_);
}

Statement& Statement::Bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                             SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(statement_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  int rc = sqlite3_bind_double(statement_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, std::nullopt_t) {
  int rc = sqlite3_bind_null(statement_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, const std::optional<double>& value) {
  return value ? Bind(index, *value) : Bind(index, std::nullopt);
}

Expected<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return std::unexpected(connection_->ErrorFor(bind_error_, "binding a parameter"));
  }
  int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(connection_->ErrorFor(rc));
}

Status Statement::Run() {
  while (true) {
    TS_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
  }
}

void Statement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_error_ = SQLITE_OK;
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(statement_, column); }

std::optional<double> Statement::OptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

Expected<std::unique_ptr<Connection>> Connection::Open(const std::string& path, OpenMode mode,
                                                       int busy_timeout_ms) {
  if (mode != OpenMode::kCreate && !std::filesystem::exists(path)) {
    return MakeError(ErrorCode::kNotFound, path + ": no results database there");
  }
  int flags = mode == OpenMode::kReadOnly
                  ? SQLITE_OPEN_READONLY
                  : SQLITE_OPEN_READWRITE | (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  std::unique_ptr<Connection> connection(new Connection(db, path, mode == OpenMode::kReadOnly));
  if (rc != SQLITE_OK) return std::unexpected(connection->ErrorFor(rc, "opening"));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  TS_RETURN_IF_ERROR(connection->Execute("PRAGMA foreign_keys = ON"));
  // A read-write open of a file we may not write falls back to read-only; say so early.
  if (sqlite3_db_readonly(db, "main") == 1) connection->read_only_ = true;
  if (!connection->read_only_) {
    // Switching the journal mode takes a lock without the busy handler: two processes
    // opening one file at once can find it taken, so it is retried for the busy timeout.
    auto journal = connection->Prepare("PRAGMA journal_mode = WAL");
    if (!journal) return std::unexpected(journal.error());
    Expected<bool> stepped = journal->Step();
    for (int waited_ms = 0;
         !stepped && (sqlite3_errcode(db) & 0xFF) == SQLITE_BUSY && waited_ms < busy_timeout_ms;
         waited_ms += 20) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      journal->Reset();
      stepped = journal->Step();
    }
    TS_ASSIGN_OR_RETURN(bool row, std::move(stepped));
    if (!row || journal->Text(0) != "wal") {
      return MakeError(ErrorCode::kFailedPrecondition,
                       path + ": could not switch to write-ahead logging (journal mode '" +
                           (row ? journal->Text(0) : std::string()) + "')");
    }
    TS_RETURN_IF_ERROR(connection->Execute("PRAGMA synchronous = FULL"));
  }
  return connection;
}

Connection::~Connection() {
  for (auto& [sql, statement] : cached_) sqlite3_finalize(statement);
  sqlite3_close_v2(db_);
}

Expected<Statement> Connection::PrepareCached(const std::string& sql) {
  auto idle = cached_.find(sql);
  if (idle != cached_.end()) {
    sqlite3_stmt* statement = idle->second;
    cached_.erase(idle);
    return Statement(statement, this, sql);
  }
  sqlite3_stmt* statement = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return std::unexpected(ErrorFor(rc, "preparing a query"));
  }
  return Statement(statement, this, sql);
}

void Connection::ReturnToCache(const std::string& sql, sqlite3_stmt* statement) {
  sqlite3_reset(statement);
  sqlite3_clear_bindings(statement);
  // Another user of the same SQL may have returned its copy first: keep one.
  if (!cached_.emplace(sql, statement).second) sqlite3_finalize(statement);
}

Status Connection::Execute(std::string_view sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return std::unexpected(ErrorFor(rc));
  return OkStatus();
}

Expected<Statement> Connection::Prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(statement);
    return std::unexpected(ErrorFor(rc, "preparing a query"));
  }
  return Statement(statement, this);
}

Expected<int64_t> Connection::QueryInt(std::string_view sql) {
  TS_ASSIGN_OR_RETURN(Statement statement, Prepare(sql));
  TS_ASSIGN_OR_RETURN(bool row, statement.Step());
  if (!row) return MakeError(ErrorCode::kInternal, "query returned no row: " + std::string(sql));
  return statement.Int(0);
}

Error Connection::ErrorFor(int rc, std::string_view doing) {
  last_error_busy_ = (rc & 0xFF) == SQLITE_BUSY || (rc & 0xFF) == SQLITE_LOCKED;
  // The connection's message is more specific (names the constraint), but only when it
  // belongs to this result code.
  std::string detail = db_ != nullptr && sqlite3_extended_errcode(db_) == rc ? sqlite3_errmsg(db_)
                                                                             : sqlite3_errstr(rc);
  std::string message = path_ + ": ";
  if (!doing.empty()) message += std::string(doing) + ": ";
  message += detail;
  message += HintFor(rc);
  return Error{CodeFor(rc), message};
}

Status Connection::RunTransactionOnce(const std::function<Status()>& body) {
  TS_RETURN_IF_ERROR(Execute("BEGIN IMMEDIATE"));
  Status status = body();
  if (status) status = Execute("COMMIT");
  // SQLite rolls some failures (a full disk) back by itself; only roll back what is open.
  if (!status && !sqlite3_get_autocommit(db_)) {
    bool busy = last_error_busy_;
    (void)Execute("ROLLBACK");
    last_error_busy_ = busy;
  }
  return status;
}

Status Connection::WriteTransaction(std::string_view what, const std::function<Status()>& body) {
  std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 0;; ++attempt) {
    last_error_busy_ = false;
    Status status = RunTransactionOnce(body);
    if (status) return status;
    if (!last_error_busy_ || attempt == kBusyRetries) {
      // Messages already start with the path; put `what` after it.
      Error error = status.error();
      if (what.empty()) return std::unexpected(error);
      if (!error.message.starts_with(path_ + ": ")) error.message.insert(0, path_ + ": ");
      error.message.insert(path_.size() + 2, std::string(what) + ": ");
      return std::unexpected(error);
    }
    auto backoff = std::chrono::milliseconds((50 << attempt) + jitter() % 50);
    std::this_thread::sleep_for(backoff);
  }
}

}  // namespace tilesmith::db::sqlite
