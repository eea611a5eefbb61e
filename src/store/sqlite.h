// A thin RAII layer over the SQLite C API, private to the store module: a connection, prepared
// statements and write transactions. Every failure becomes a kvs::Error naming the database file
// and what was being done.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kvs::store {

class Connection {
 public:
  // Opens the database file read-only, or read-write (creating it when missing). SQLite waits up
  // to busy_timeout_ms for a lock another process holds before giving up.
  Connection(const std::string& path, bool read_only, int busy_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Runs one or more statements that return no rows of interest.
  void exec(const std::string& sql, const std::string& doing);
  // exec for statements SQLite runs without waiting on its busy handler (changing the journal
  // mode while another connection sets up the same new file): retried until the busy timeout.
  void exec_retrying_when_busy(const std::string& sql, const std::string& doing);
  int64_t last_insert_rowid() const;

  // Throws the error for result code rc: "<file>: <doing>: <SQLite's message>[; <what to do>]".
  [[noreturn]] void fail(int rc, const std::string& doing) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  int busy_timeout_ms_;
};

class Statement {
 public:
  // `doing` says what the statement is for, in the error when it fails ("recording state 3").
  Statement(Connection& connection, const char* sql, std::string doing);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1 (?1, ?2, ... in the SQL). An empty optional binds NULL.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, const std::optional<int64_t>& value);
  Statement& bind(int index, const std::optional<double>& value);
  Statement& bind(int index, const std::optional<std::string>& value);

  // Advances to the next row; false when the statement is done.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  // Clears the bindings and rewinds, for running the statement again.
  void reset();

  bool is_null(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::optional<int64_t> optional_integer(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<std::string> optional_text(int column) const;

 private:
  void check_bind(int rc, int index) const;

  Connection& connection_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string doing_;
};

// BEGIN IMMEDIATE ... COMMIT. Taking the write lock up front means a writer waits (busy timeout)
// at BEGIN instead of failing when it upgrades a read lock another writer raced it to. Rolls back
// when destroyed before commit(), e.g. by an exception.
class Transaction {
 public:
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

}  // namespace kvs::store
