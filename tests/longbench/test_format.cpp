#include <gtest/gtest.h>

#include "core/error.h"
#include "longbench/format.h"

namespace {

using namespace kvs::longbench;

const std::map<std::string, std::string> kFields = {{"context", "C"}, {"input", "I"}};

std::string error_of(const std::string& tmpl) {
  try {
    format_template(tmpl, kFields, "tmpl");
  } catch (const kvs::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Format, FillsNamedFieldsAndBraceEscapes) {
  EXPECT_EQ(format_template("Read {context}.\nQ: {input}\nA:", kFields, "t"), "Read C.\nQ: I\nA:");
  EXPECT_EQ(format_template("{{json}} {input}}}", kFields, "t"), "{json} I}");
  EXPECT_EQ(format_template("{context}{context}", kFields, "t"), "CC");
  EXPECT_EQ(format_template("", kFields, "t"), "");
  EXPECT_EQ(template_fields("{context} and {input}", "t"), (std::vector<std::string>{"context", "input"}));
}

TEST(Format, RejectsWhatStrFormatRejectsOrThisSubsetLacks) {
  EXPECT_NE(error_of("a } b").find("single '}'"), std::string::npos);
  EXPECT_NE(error_of("a { b").find("never closed"), std::string::npos);
  EXPECT_NE(error_of("{}").find("positional"), std::string::npos);
  EXPECT_NE(error_of("{0}").find("positional"), std::string::npos);
  EXPECT_NE(error_of("{input!r}").find("unsupported"), std::string::npos);
  EXPECT_NE(error_of("{input:>9}").find("unsupported"), std::string::npos);
  EXPECT_NE(error_of("{input.x}").find("unsupported"), std::string::npos);
  EXPECT_NE(error_of("{input[0]}").find("unsupported"), std::string::npos);
  EXPECT_NE(error_of("{answers}").find("lacks"), std::string::npos);
  EXPECT_EQ(error_of("{answers}").rfind("tmpl: ", 0), 0u);
}

}  // namespace
