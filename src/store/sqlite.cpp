#include "store/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

#include "core/error.h"

namespace kvs::store {

namespace {

// What the user can do about the common failures; empty when SQLite's message says it all.
std::string hint_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "; another process kept the database locked past the busy timeout";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "; the file is damaged or not a kvsearch database: restore it or use another file";
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return "; check the path and that its directory is writable";
    case SQLITE_FULL:
      return "; the disk is full";
    default:
      return "";
  }
}

}  // namespace

Connection::Connection(const std::string& path, bool read_only, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  // A read-only store still opens the file read-write (never creating it) and refuses writes with
  // query_only: a SQLITE_OPEN_READONLY connection cannot remove the -wal and -shm files of a WAL
  // database when it closes, so it would leave them behind. A write-protected file still opens
  // (SQLite falls back to read-only).
  const int flags = read_only ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw error_at(path, "cannot open the database: " + message + hint_for(rc));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  if (read_only) exec("PRAGMA query_only = ON", "opening the database read-only");
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::exec(const std::string& sql, const std::string& doing) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, doing);
}

void Connection::exec_retrying_when_busy(const std::string& sql, const std::string& doing) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
  for (;;) {
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline)
      fail(rc, doing);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

void Connection::fail(int rc, const std::string& doing) const {
  const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  throw error_at(path_, doing + ": " + message + hint_for(rc));
}

Statement::Statement(Connection& connection, const char* sql, std::string doing)
    : connection_(connection), doing_(std::move(doing)) {
  const int rc = sqlite3_prepare_v2(connection.handle(), sql, -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) connection.fail(rc, doing_);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check_bind(int rc, int index) const {
  if (rc != SQLITE_OK) connection_.fail(rc, doing_ + " (parameter " + std::to_string(index) + ")");
}

Statement& Statement::bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  check_bind(rc, index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  check_bind(rc, index);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  check_bind(rc, index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<int64_t>& value) {
  if (value) return bind(index, *value);
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  if (value) return bind(index, *value);
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  if (value) return bind(index, *value);
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_.fail(rc, doing_);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return data ? std::string(data, sqlite3_column_bytes(stmt_, column)) : std::string();
}

std::optional<int64_t> Statement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

Transaction::Transaction(Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE", "starting a write transaction");
}

Transaction::~Transaction() {
  // The error that unwinds the stack is the one to report; a failed rollback adds nothing to it.
  if (open_) sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  connection_.exec("COMMIT", "committing");
  open_ = false;
}

}  // namespace kvs::store
