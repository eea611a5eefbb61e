#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace {

using kvs::tokenizer::is_valid_utf8;
using kvs::tokenizer::replace_invalid_utf8;

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextPassesThrough) {
  const std::string text = "plain, caf\xC3\xA9, \xE6\x9D\xB1, \xF0\x9F\x99\x82";
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(replace_invalid_utf8(text), text);
}

// Expected values are what Python's bytes.decode('utf-8', errors='replace') returns.
TEST(Utf8, ReplacementFollowsPython) {
  EXPECT_EQ(replace_invalid_utf8("\xF0\x9F"), kFffd);  // truncated: one subpart
  EXPECT_EQ(replace_invalid_utf8("\xF0\x9F"
                                 "A"),
            kFffd + "A");                                                  // cut before ASCII
  EXPECT_EQ(replace_invalid_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // surrogate
  EXPECT_EQ(replace_invalid_utf8("\xC0\x80"), kFffd + kFffd);              // overlong
  EXPECT_EQ(replace_invalid_utf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);
  EXPECT_EQ(replace_invalid_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(replace_invalid_utf8("\x80"
                                 "a\xFF"),
            kFffd + "a" + kFffd);
  EXPECT_EQ(replace_invalid_utf8("\xE6\x9D"
                                 "\xE6\x9D\xB1"),
            kFffd + "\xE6\x9D\xB1");
  EXPECT_FALSE(is_valid_utf8("\xF0\x9F"));
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
}

}  // namespace
