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

// A version-1 file (before cache_layouts) reads as it is and is migrated when opened for
// writing: its data kept, the layouts of new states recorded.
TEST(Schema, VersionOneIsReadAndMigratedOnWrite) {
  ScratchDir dir;
  const std::string path = dir.file("v1.db");
  {
    Store store(path);
    store.record_state(store.find_or_create_run(make_spec("r")).run, make_state(0));
  }
  {
    Connection db(path, false, 1000);
    db.exec("DROP TABLE cache_layouts; PRAGMA user_version = 1", "test");
  }
  {
    Store store(path, Access::read_only);
    const store::Run run = store.list_runs().front();
    const State state = store.states_of(run).front();
    EXPECT_FALSE(store.cache_layout(state, "dev").has_value());
    Connection db(path, true, 1000);
    EXPECT_EQ(pragma(db, "PRAGMA user_version"), 1);
  }
  Store store(path);
  {
    Connection db(path, true, 1000);
    EXPECT_EQ(pragma(db, "PRAGMA user_version"), 2);
  }
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
