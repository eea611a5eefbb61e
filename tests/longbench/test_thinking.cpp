// longbench/thinking.h: what the scorer sees of a reasoning model's answer.
#include <gtest/gtest.h>

#include "core/error.h"
#include "longbench/thinking.h"

using kvs::longbench::scored_text;
using kvs::longbench::Thinking;

TEST(Thinking, StripKeepsWhatFollowsTheLastClosingTag) {
  EXPECT_EQ(scored_text("Let me see. 2+2 is 4.\n</think>\n\nThe answer is 4.", Thinking::Strip),
            "The answer is 4.");
  EXPECT_EQ(scored_text("<think>a</think> b</think>  c", Thinking::Strip), "c");
  EXPECT_EQ(scored_text("thinking that never ends </think>\n  ", Thinking::Strip), "");
}

TEST(Thinking, WithoutAClosingTagOrWithKeepTheTextIsUnchanged) {
  EXPECT_EQ(scored_text("no section here", Thinking::Strip), "no section here");
  EXPECT_EQ(scored_text("<think> still thinking", Thinking::Strip), "<think> still thinking");
  EXPECT_EQ(scored_text("a</think>b", Thinking::Keep), "a</think>b");
}

TEST(Thinking, NamesParse) {
  EXPECT_EQ(kvs::longbench::parse_thinking("strip"), Thinking::Strip);
  EXPECT_EQ(kvs::longbench::parse_thinking("keep"), Thinking::Keep);
  EXPECT_THROW(kvs::longbench::parse_thinking("drop"), kvs::Error);
}
