#include "store/schema.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/log.h"
#include "store/sqlite.h"

namespace kvs::store {

namespace {

// Version 1 (version 2 adds kVersion2Sql below). Timestamps are UTC ISO-8601 text; JSON columns
// hold JSON text; NULL means "does not
// apply" (see README.md for every column).
constexpr const char* kSchemaSql = R"SQL(
CREATE TABLE experiments (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  spec_json   TEXT NOT NULL,
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE jobs (
  id             INTEGER PRIMARY KEY,
  job_key        TEXT NOT NULL UNIQUE,
  experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
  spec_json      TEXT NOT NULL,
  host           TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished')),
  prefills       INTEGER,
  started_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at    TEXT
);
CREATE INDEX jobs_by_experiment ON jobs(experiment_id);

CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  run_key         TEXT NOT NULL UNIQUE,
  job_id          INTEGER REFERENCES jobs(id),
  model           TEXT NOT NULL,
  model_path      TEXT NOT NULL,
  dataset         TEXT NOT NULL,
  longbench_dir   TEXT NOT NULL,
  split_seed      INTEGER NOT NULL,
  dev_limit       INTEGER,
  budget          INTEGER NOT NULL,
  profile_family  TEXT NOT NULL,
  segments        INTEGER,
  search_json     TEXT NOT NULL,
  policy_json     TEXT NOT NULL,
  git_commit      TEXT NOT NULL,
  build_type      TEXT NOT NULL,
  command_line    TEXT NOT NULL,
  host            TEXT NOT NULL,
  status          TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished')),
  started_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at     TEXT
);
CREATE INDEX runs_by_job ON runs(job_id);

CREATE TABLE states (
  id                  INTEGER PRIMARY KEY,
  run_id              INTEGER NOT NULL REFERENCES runs(id),
  eval_order          INTEGER NOT NULL CHECK (eval_order >= 0),
  latent_json         TEXT NOT NULL,
  lambda1_json        TEXT NOT NULL,
  lambda2_json        TEXT NOT NULL,
  policy_json         TEXT NOT NULL,
  dev_score           REAL NOT NULL,
  accepted            INTEGER NOT NULL CHECK (accepted IN (0, 1)),
  best_so_far         REAL NOT NULL,
  changed_coordinate  INTEGER,
  delta               REAL,
  seconds             REAL NOT NULL,
  created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (run_id, eval_order)
);

CREATE TABLE replays (
  id              INTEGER PRIMARY KEY,
  state_id        INTEGER NOT NULL REFERENCES states(id),
  split           TEXT NOT NULL CHECK (split = 'test'),
  score           REAL NOT NULL,
  official_score  REAL NOT NULL,
  seconds         REAL NOT NULL,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (state_id, split)
);

CREATE TABLE predictions (
  id                INTEGER PRIMARY KEY,
  state_id          INTEGER NOT NULL REFERENCES states(id),
  split             TEXT NOT NULL CHECK (split IN ('dev', 'test')),
  question_index    INTEGER NOT NULL,
  question_id       TEXT NOT NULL,
  prediction        TEXT NOT NULL,
  score             REAL NOT NULL,
  official_score    REAL,
  prompt_tokens     INTEGER NOT NULL,
  generated_tokens  INTEGER NOT NULL,
  seconds           REAL NOT NULL,
  UNIQUE (state_id, split, question_index)
);

CREATE VIEW trajectory AS
SELECT runs.id AS run_id, runs.run_key, runs.dataset, runs.profile_family, runs.budget,
       states.eval_order, states.changed_coordinate, states.delta, states.dev_score,
       replays.score AS test_score, replays.official_score AS test_official_score
FROM states
JOIN runs ON runs.id = states.run_id
LEFT JOIN replays ON replays.state_id = states.id
WHERE states.accepted = 1;
)SQL";

// What version 2 added to version 1.
constexpr const char* kVersion2Sql = R"SQL(
CREATE TABLE cache_layouts (
  id             INTEGER PRIMARY KEY,
  state_id       INTEGER NOT NULL REFERENCES states(id),
  split          TEXT NOT NULL CHECK (split IN ('dev', 'test')),
  questions      INTEGER NOT NULL CHECK (questions >= 1),
  kept_entries   REAL NOT NULL,
  held_bytes     REAL NOT NULL,
  uniform_bytes  REAL NOT NULL,
  counts_json    TEXT NOT NULL,
  UNIQUE (state_id, split)
);
)SQL";

// What version 3 added to version 2: the binary that computed each split. A state's dev split and
// a replay's test split record the kvsearch build that evaluated them (build_info::git_commit()),
// which differs from the run's when a job resumed on another build; NULL in rows recorded before.
constexpr const char* kVersion3Sql = R"SQL(
ALTER TABLE states ADD COLUMN git_commit TEXT;
ALTER TABLE replays ADD COLUMN git_commit TEXT;
)SQL";

// What version 4 added to version 3: the cache a decode-time policy held while decoding. A
// decode-time policy's cache layout records the entries held after its last step (counts), the
// largest one KV head of one layer held at any step (mean over the questions) and the schedule's
// bound on it; both NULL for a prefill-time policy and in rows recorded before.
constexpr const char* kVersion4Sql = R"SQL(
ALTER TABLE cache_layouts ADD COLUMN largest_entries REAL;
ALTER TABLE cache_layouts ADD COLUMN bound_entries REAL;
)SQL";

constexpr unsigned char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                            'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
constexpr size_t kHeaderBytes = 100;

uint32_t read_u32_be(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

int64_t pragma_integer(Connection& connection, const char* pragma) {
  Statement statement(connection, pragma, std::string("reading ") + pragma);
  if (!statement.step()) throw error_at(connection.path(), std::string(pragma) + " gave no value");
  return statement.integer(0);
}

// Names of the tables and views already in the database, "a, b, c".
std::string existing_objects(Connection& connection) {
  Statement statement(connection,
                      "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                      "AND name NOT LIKE 'sqlite_%' ORDER BY name",
                      "listing the tables");
  std::string names;
  while (statement.step()) names += (names.empty() ? "" : ", ") + statement.text(0);
  return names;
}

// What tells a kvsearch database, of which version, from a new file or another program's.
struct FileIdentity {
  int64_t application_id = 0;
  int64_t version = 0;
  std::string objects;  // its tables and views
  bool fresh() const { return application_id == 0 && version == 0 && objects.empty(); }
};

FileIdentity read_identity(Connection& connection) {
  return {pragma_integer(connection, "PRAGMA application_id"),
          pragma_integer(connection, "PRAGMA user_version"), existing_objects(connection)};
}

// WAL lets readers and one writer work at once; the mode is stored in the file.
void enable_wal(Connection& connection) {
  connection.exec_retrying_when_busy("PRAGMA journal_mode = WAL", "enabling WAL mode");
  Statement statement(connection, "PRAGMA journal_mode", "reading the journal mode");
  const std::string mode = statement.step() ? statement.text(0) : "";
  if (mode != "wal")
    log::warn(connection.path() + ": SQLite refused WAL mode (journal mode '" + mode +
              "'); concurrent writers will wait longer");
}

}  // namespace

void check_file_header(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return;  // a new database
  if (S_ISDIR(info.st_mode)) throw error_at(path, "is a directory, not a database file");
  const uint64_t file_bytes = static_cast<uint64_t>(info.st_size);
  if (file_bytes == 0) return;  // SQLite treats an empty file as an empty database

  unsigned char header[kHeaderBytes] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot read the database file: " + std::string(strerror(errno)));
  in.read(reinterpret_cast<char*>(header), kHeaderBytes);
  if (static_cast<size_t>(in.gcount()) < kHeaderBytes ||
      std::memcmp(header, kSqliteMagic, sizeof kSqliteMagic) != 0)
    throw error_at(path, "not a SQLite database (no SQLite header): use another file");

  const uint32_t raw_page_size = (uint32_t(header[16]) << 8) | header[17];
  const uint64_t page_size = raw_page_size == 1 ? 65536 : raw_page_size;
  const uint32_t change_counter = read_u32_be(header + 24);
  const uint32_t pages = read_u32_be(header + 28);
  const uint32_t valid_for = read_u32_be(header + 92);
  // SQLite trusts the page count only when it was written with the current change counter.
  if (pages > 0 && change_counter == valid_for && file_bytes < pages * page_size)
    throw error_at(path, strfmt("the database is truncated: its header records %u pages of %llu "
                                "bytes but the file has %llu bytes; restore it or use another file",
                                pages, static_cast<unsigned long long>(page_size),
                                static_cast<unsigned long long>(file_bytes)));
}

std::unique_ptr<Connection> open_database(const std::string& path, Access access,
                                          int busy_timeout_ms) {
  const bool read_only = access == Access::read_only;
  struct stat info;
  if (read_only && stat(path.c_str(), &info) != 0) throw error_at(path, "no such database file");
  check_file_header(path);
  auto connection = std::make_unique<Connection>(path, read_only, busy_timeout_ms);
  if (!read_only) {
    enable_wal(*connection);
    // NORMAL under WAL: a process killed mid-run loses nothing committed; only a power cut may
    // lose the last transactions.
    connection->exec("PRAGMA synchronous = NORMAL", "setting the synchronous mode");
  }
  connection->exec("PRAGMA foreign_keys = ON", "enabling foreign keys");  // off by default

  // One read transaction for the three reads: on their own, another process's schema commit could
  // fall between them (its tables seen, its application_id not yet), which reads as a foreign file.
  connection->exec("BEGIN", "reading the database's identity");
  FileIdentity identity = read_identity(*connection);
  connection->exec("COMMIT", "reading the database's identity");
  if (identity.fresh()) {
    if (read_only) throw error_at(path, "is an empty database, not a kvsearch one");
    // Read again under the write lock: another process may be creating the same file.
    Transaction transaction(*connection);
    identity = read_identity(*connection);
    const bool create = identity.fresh();
    if (create) {
      connection->exec(kSchemaSql, "creating the schema");
      connection->exec(kVersion2Sql, "creating the schema");
      connection->exec(kVersion3Sql, "creating the schema");
      connection->exec(kVersion4Sql, "creating the schema");
      connection->exec(
          strfmt("PRAGMA application_id = %lld; PRAGMA user_version = %lld",
                 static_cast<long long>(kApplicationId), static_cast<long long>(kSchemaVersion)),
          "recording the schema version");
      log::debug(path + ": created a kvsearch database, schema version " +
                 std::to_string(kSchemaVersion));
    }
    transaction.commit();
    if (create) return connection;
  }
  const auto& [application_id, version, objects] = identity;
  if (application_id != kApplicationId)
    throw error_at(
        path, "not a kvsearch database (SQLite application_id " + std::to_string(application_id) +
                  ", tables: " + (objects.empty() ? "none" : objects) + "): use another file");
  if (version > kSchemaVersion)
    throw error_at(path, "database schema version " + std::to_string(version) +
                             " is newer than this build's version " +
                             std::to_string(kSchemaVersion) + ": open it with a newer kvsearch");
  if (version < kSchemaVersion && version >= 1) {
    if (read_only) return connection;  // read as it is: the rows lack what later versions added
    Transaction transaction(*connection);
    const int64_t found =
        pragma_integer(*connection, "PRAGMA user_version");  // migrated meanwhile?
    if (found < 2) connection->exec(kVersion2Sql, "migrating the schema from version 1 to 2");
    if (found < 3) connection->exec(kVersion3Sql, "migrating the schema to version 3");
    if (found < 4) connection->exec(kVersion4Sql, "migrating the schema to version 4");
    if (found < kSchemaVersion) {
      connection->exec(strfmt("PRAGMA user_version = %lld", static_cast<long long>(kSchemaVersion)),
                       "recording the schema version");
      log::debug(path + strfmt(": migrated the schema from version %lld to %lld",
                               static_cast<long long>(found),
                               static_cast<long long>(kSchemaVersion)));
    }
    transaction.commit();
    return connection;
  }
  if (version != kSchemaVersion)
    throw error_at(path, "unknown database schema version " + std::to_string(version) +
                             " (this build writes " + std::to_string(kSchemaVersion) + ")");
  return connection;
}

bool has_column(Connection& connection, const std::string& table, const std::string& column) {
  Statement statement(connection, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
                      "looking up column " + table + "." + column);
  statement.bind(1, table).bind(2, column);
  return statement.step();
}

bool has_table(Connection& connection, const std::string& name) {
  Statement statement(connection, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                      "looking up table " + name);
  statement.bind(1, name);
  return statement.step();
}

void check_integrity(Connection& connection) {
  Statement statement(connection, "PRAGMA quick_check", "checking integrity");
  std::string problems;
  int reported = 0;
  while (statement.step() && reported < 3) {  // the first problems are enough to tell
    std::string line = statement.text(0);
    if (line == "ok") continue;
    std::replace(line.begin(), line.end(), '\n', ' ');  // errors are one line
    problems += (problems.empty() ? "" : "; ") + line;
    ++reported;
  }
  if (!problems.empty())
    throw error_at(connection.path(),
                   "the database is damaged (" + problems + "): restore it or use another file");
}

}  // namespace kvs::store
