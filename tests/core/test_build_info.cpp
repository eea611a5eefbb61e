// The binary's name as results record it: a 12-digit commit, "-dirty-" and 12 digits of its
// diff's hash when built from a tree with uncommitted changes, or "unknown" outside git; and
// is_dirty() tells the dirty names (older rows: "-dirty" without a hash) from the clean ones.
#include <gtest/gtest.h>

#include <regex>

#include "core/build_info.h"

namespace kvs::build_info {
namespace {

TEST(BuildInfo, GitCommitNamesTheCommitAndADirtyTreesDiff) {
  const std::string commit = git_commit();
  EXPECT_TRUE(std::regex_match(commit, std::regex("[0-9a-f]{12}(-dirty-[0-9a-f]{12})?|unknown")))
      << commit;
  EXPECT_EQ(is_dirty(commit), commit.find("-dirty-") != std::string::npos);
}

TEST(BuildInfo, IsDirtyReadsRecordedCommits) {
  EXPECT_TRUE(is_dirty("3de19fd98676-dirty"));  // recorded before the diff's hash
  EXPECT_TRUE(is_dirty("e17a08faa51c-dirty-0123456789ab"));
  EXPECT_FALSE(is_dirty("bd06461cbfd9"));
  EXPECT_FALSE(is_dirty("unknown"));
}

}  // namespace
}  // namespace kvs::build_info
