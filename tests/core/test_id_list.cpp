#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/id_list.h"

namespace kvs {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_id_list(text, "--ids");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IdList, CommaSeparatedIdsWithSpaces) {
  EXPECT_EQ(parse_id_list("1,15043, 29892 ,-1", "--ids"), (std::vector<int32_t>{1, 15043, 29892, -1}));
  EXPECT_TRUE(parse_id_list("", "--ids").empty());
  EXPECT_TRUE(parse_id_list("  ", "--ids").empty());
}

TEST(IdList, BlankItemsNonIntegersAndOutOfRangeIdsAreNamed) {
  EXPECT_NE(error_of("1,,2").find("--ids: '' is not an integer id"), std::string::npos);
  EXPECT_NE(error_of("1,x").find("'x'"), std::string::npos);
  EXPECT_NE(error_of("1,2.5").find("'2.5'"), std::string::npos);
  EXPECT_NE(error_of("4294967296").find("'4294967296'"), std::string::npos);
  EXPECT_NE(error_of("1,2,").find("ends with a comma"), std::string::npos);
}

}  // namespace
}  // namespace kvs
