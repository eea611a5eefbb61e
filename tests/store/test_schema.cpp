// The file-level guarantees: version and application id, WAL, and clear errors for files that are
// not (or no longer) kvsearch databases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "store/schema.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store_fixtures.h"

namespace kvs::store {
namespace {

using test_support::expect_error;
using test_support::make_replay;
using test_support::make_spec;
using test_support::make_state;
using test_support::ScratchDir;

int64_t pragma(Connection& db, const char* sql) {
  Statement statement(db, sql, "test");
  EXPECT_TRUE(statement.step());
  return statement.integer(0);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  return bytes;
}

// A database of many pages, closed (so fully checkpointed into the main file).
void fill_database(const std::string& path) {
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("big")).run;
  for (int order = 0; order < 40; ++order) store.record_state(run, make_state(order, 20));
}

TEST(Schema, NewDatabaseIsVersionedAndInWalMode) {
  ScratchDir dir;
  const std::string path = dir.file("new.db");
  { Store store(path); }
  Connection db(path, true, 1000);
  EXPECT_EQ(pragma(db, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(pragma(db, "PRAGMA application_id"), kApplicationId);
  Statement mode(db, "PRAGMA journal_mode", "test");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "wal");
}

TEST(Schema, ReopeningKeepsTheData) {
  ScratchDir dir;
  const std::string path = dir.file("keep.db");
  {
    Store store(path);
    store.record_state(store.find_or_create_run(make_spec("r")).run, make_state(0));
  }
  Store store(path, Access::read_only);
  ASSERT_EQ(store.list_runs().size(), 1u);
  EXPECT_EQ(store.list_runs()[0].states, 1);
}

TEST(Schema, EmptyFileBecomesADatabase) {
  ScratchDir dir;
  const std::string path = dir.file("empty.db");
  write_bytes(path, "");
  Store store(path);
  EXPECT_TRUE(store.list_runs().empty());
}

TEST(Schema, NewerSchemaVersionIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("future.db");
  { Store store(path); }
  {
    Connection db(path, false, 1000);
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1), "test");
  }
  expect_error([&] { Store store(path); },
               {path, "schema version " + std::to_string(kSchemaVersion + 1), "newer"});
  expect_error([&] { Store store(path, Access::read_only); }, {path, "newer"});
}

// A database written by this build, then turned back into the tables of schema `version` (1, 2
// or 3): one run with one state and its test replay.
void write_older(const std::string& path, int64_t version) {
  {
    Store store(path);
    const store::Run run = store.find_or_create_run(make_spec("r")).run;
    store.record_state(run, make_state(0));
    store.record_replay(store.states_of(run).front(), make_replay());
  }
  Connection db(path, false, 1000);
  db.exec(std::string(version < 2   ? "DROP TABLE cache_layouts; "
                      : version < 4 ? "ALTER TABLE cache_layouts DROP COLUMN largest_entries; "
                                      "ALTER TABLE cache_layouts DROP COLUMN bound_entries; "
                                    : "") +
              (version < 3 ? "ALTER TABLE states DROP COLUMN git_commit; ALTER TABLE replays "
                             "DROP COLUMN git_commit; "
                           : "") +
              "PRAGMA user_version = " + std::to_string(version),
          "test");
}

int64_t version_of(const std::string& path) {
  Connection db(path, true, 1000);
  return pragma(db, "PRAGMA user_version");
}

// Older files read as they are: a version-1 file has no cache layouts, neither it nor a version-2
// file (results/example-*/results.sqlite) names the binary of a split (the report then falls back
// to the run's); reading leaves their version alone.
TEST(Schema, OlderVersionsAreReadAsTheyAre) {
  for (const int64_t version : {1, 2, 3}) {
    SCOPED_TRACE(version);
    ScratchDir dir;
    const std::string path = dir.file("old.db");
    write_older(path, version);
    {
      Store store(path, Access::read_only);
      const store::Run run = store.list_runs().front();
      const State state = store.states_of(run).front();
      EXPECT_EQ(store.cache_layout(state, "dev").has_value(), version >= 2);
      if (version >= 2) {
        EXPECT_FALSE(store.cache_layout(state, "dev")->largest_entries);
      }
      EXPECT_EQ(state.record.git_commit, version >= 3 ? "abc123def456" : "");
      EXPECT_EQ(store.replays_of(run).front().git_commit, version >= 3 ? "0a1b2c3d4e5f" : "");
      EXPECT_EQ(run.spec.git_commit, "abc123def456");
    }
    EXPECT_EQ(version_of(path), version);
  }
}

// A version-1 file is migrated when opened for writing: its data kept, the layouts of new states
// recorded.
TEST(Schema, VersionOneIsMigratedOnWrite) {
  ScratchDir dir;
  const std::string path = dir.file("v1.db");
  write_older(path, 1);
  Store store(path);
  EXPECT_EQ(version_of(path), kSchemaVersion);
  const store::Run run = store.find_or_create_run(make_spec("r")).run;
  StateRecord with_layout = make_state(1);
  with_layout.cache = CacheLayout{3, 10.5, 2048, 1024, {{2.5, 3}, {4, 1}}};
  store.record_state(run, with_layout);
  const std::vector<State> states = store.states_of(run);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_FALSE(store.cache_layout(states[0], "dev").has_value());
  EXPECT_EQ(store.cache_layout(states[1], "dev"), with_layout.cache);
  EXPECT_FALSE(store.cache_layout(states[1], "test").has_value());
}

// A version-2 file is migrated to version 3 when opened for writing: its rows kept (naming no
// binary), new states and replays recording theirs.
TEST(Schema, VersionTwoIsMigratedOnWrite) {
  ScratchDir dir;
  const std::string path = dir.file("v2.db");
  write_older(path, 2);
  Store store(path);
  EXPECT_EQ(version_of(path), kSchemaVersion);
  const store::Run run = store.find_or_create_run(make_spec("r")).run;
  StateRecord resumed = make_state(1);
  resumed.git_commit = "fedcba987654-dirty-0123456789ab";  // resumed on another build
  store.record_state(run, resumed);
  store.record_replay(store.states_of(run)[1], make_replay());
  const std::vector<State> states = store.states_of(run);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].record.git_commit, "");
  EXPECT_EQ(states[1].record.git_commit, "fedcba987654-dirty-0123456789ab");
  EXPECT_EQ(store.replays_of(run)[1].git_commit, "0a1b2c3d4e5f");
}

// A version-3 file is migrated to version 4 when opened for writing: its layouts kept (no
// decode-time sizes), a decode-time policy's layout recorded with its largest cache and bound.
TEST(Schema, VersionThreeIsMigratedOnWrite) {
  ScratchDir dir;
  const std::string path = dir.file("v3.db");
  write_older(path, 3);
  Store store(path);
  EXPECT_EQ(version_of(path), kSchemaVersion);
  const store::Run run = store.find_or_create_run(make_spec("r")).run;
  StateRecord decode_time = make_state(1);
  decode_time.cache = CacheLayout{2, 96, 4096, 4096, {{16, 16}, {16, 16}}};
  decode_time.cache->largest_entries = 71.5;
  decode_time.cache->bound_entries = 72;
  store.record_state(run, decode_time);
  const std::vector<State> states = store.states_of(run);
  ASSERT_EQ(states.size(), 2u);
  ASSERT_TRUE(store.cache_layout(states[0], "dev").has_value());
  EXPECT_FALSE(store.cache_layout(states[0], "dev")->largest_entries);
  EXPECT_EQ(store.cache_layout(states[1], "dev"), decode_time.cache);
}

TEST(Schema, OtherSqliteDatabaseIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("other.db");
  {
    Connection db(path, false, 1000);
    db.exec("CREATE TABLE notes (body TEXT)", "test");
  }
  expect_error([&] { Store store(path); }, {path, "not a kvsearch database", "notes"});
}

TEST(Schema, RandomBytesAreRefused) {
  ScratchDir dir;
  const std::string path = dir.file("random.db");
  write_bytes(path, random_bytes(8192, 7));
  expect_error([&] { Store store(path); }, {path, "not a SQLite database"});
  write_bytes(path, "hello");
  expect_error([&] { Store store(path); }, {path, "not a SQLite database"});
}

TEST(Schema, TruncatedDatabaseIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("truncated.db");
  fill_database(path);
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 16u * 4096u);
  std::filesystem::resize_file(path, size / 2);
  expect_error([&] { Store store(path); }, {path, "truncated"});
  std::filesystem::resize_file(path, 60);  // not even a whole header
  expect_error([&] { Store store(path); }, {path, "not a SQLite database"});
}

TEST(Schema, DamagedPagesAreFoundByTheIntegrityCheck) {
  ScratchDir dir;
  const std::string path = dir.file("damaged.db");
  fill_database(path);
  const auto size = std::filesystem::file_size(path);
  {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage = random_bytes(3 * 4096, 11);
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  expect_error(
      [&] {
        Store store(path);
        store.check_integrity();
      },
      {path});
}

TEST(Schema, ReadOnlyOpenRefusesMissingFiles) {
  ScratchDir dir;
  const std::string path = dir.file("missing.db");
  expect_error([&] { Store store(path, Access::read_only); }, {path, "no such database"});
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Schema, DirectoryIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("sub");
  std::filesystem::create_directory(path);
  expect_error([&] { Store store(path); }, {path, "directory"});
}

}  // namespace
}  // namespace kvs::store
