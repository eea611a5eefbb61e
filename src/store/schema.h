// The database schema: its version, its creation, and the checks that a file is a kvsearch
// database this build can read. The tables are documented in README.md next to this file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace kvs::store {

class Connection;

enum class Access { read_write, read_only };

// Kept in PRAGMA user_version. Bump it with every change to the tables, and teach
// open_database() to migrate the older versions it can.
constexpr int64_t kSchemaVersion = 4;
// Kept in PRAGMA application_id ("KVSR"): tells our databases from other SQLite files.
constexpr int64_t kApplicationId = 0x4B565352;

// Opens a kvsearch database: checks the file's header, sets the connection's pragmas (WAL,
// foreign keys), creates the schema in a new or empty file (read_write only), and refuses files
// of other applications and of newer schema versions. An older file (version 1: no cache_layouts
// table; version 2: no git_commit of the states and replays; version 3: no decode-time cache
// sizes in cache_layouts) is migrated when opened read_write
// and read as it is otherwise. read_only refuses a missing file.
std::unique_ptr<Connection> open_database(const std::string& path, Access access,
                                          int busy_timeout_ms);

// Checks the first bytes of an existing file: a SQLite header whose recorded size the file
// actually has. Catches random bytes and truncated copies before SQLite reads any page.
void check_file_header(const std::string& path);

// Whether the database has the table (a version-1 file lacks cache_layouts).
bool has_table(Connection& connection, const std::string& name);

// Whether the table has the column (a file before version 3 lacks states.git_commit).
bool has_column(Connection& connection, const std::string& table, const std::string& column);

// SQLite's quick_check: reads every page, O(file size). Throws naming the file when damaged.
void check_integrity(Connection& connection);

}  // namespace kvs::store
