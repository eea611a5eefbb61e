#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using kvs::tokenizer::load_tokenizer;

class LoadTokenizer : public ::testing::Test {
 protected:
  kvs::test::ScratchDir dir;
  void link(const std::string& target, const std::string& name) {
    fs::create_directories((fs::path(dir.path()) / name).parent_path());
    fs::create_symlink(fs::absolute(target), fs::path(dir.path()) / name);
  }
};

TEST_F(LoadTokenizer, TiktokenTokenizerModelIsBpe) {
  link(kvs::test::llama3_model_path(), "tokenizer.model");
  const auto tok = load_tokenizer(dir.path());
  EXPECT_EQ(tok->kind(), "bpe");
  EXPECT_EQ(tok->encode("Hello, world!"), (std::vector<int32_t>{9906, 11, 1917, 0}));
}

TEST_F(LoadTokenizer, SentencePieceTokenizerModel) {
  link(kvs::test::mistral_model_path(), "tokenizer.model");
  EXPECT_EQ(load_tokenizer(dir.path())->kind(), "sentencepiece");
}

TEST_F(LoadTokenizer, HfLayoutKeepsMetasFileInOriginal) {
  link(kvs::test::llama3_model_path(), "original/tokenizer.model");
  EXPECT_EQ(load_tokenizer(dir.path())->bos_id(), 128000);
  EXPECT_EQ(kvs::tokenizer::find_tokenizer_file(dir.path()),
            dir.path() + "/original/tokenizer.model");
}

TEST_F(LoadTokenizer, TokenizerJsonComesBeforeOriginal) {
  link(kvs::test::llama3_model_path(), "original/tokenizer.model");
  dir.write("tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}");
  EXPECT_EQ(kvs::tokenizer::find_tokenizer_file(dir.path()), dir.path() + "/tokenizer.json");
  const auto message = kvs::test::error_of([&] { load_tokenizer(dir.path()); });
  EXPECT_NE(message.find("model type 'Unigram' is not a BPE"), std::string::npos) << message;
}

TEST_F(LoadTokenizer, EmptyDirectoryIsAnError) {
  const auto message = kvs::test::error_of([&] { load_tokenizer(dir.path()); });
  EXPECT_NE(message.find("no tokenizer in the model directory"), std::string::npos) << message;
}

TEST_F(LoadTokenizer, FileKindIsToldByContent) {
  link(kvs::test::llama3_model_path(), "renamed.bin");
  EXPECT_EQ(kvs::tokenizer::load_tokenizer_file(dir.path() + "/renamed.bin")->kind(), "bpe");
  link(kvs::test::mistral_model_path(), "other.bin");
  EXPECT_EQ(kvs::tokenizer::load_tokenizer_file(dir.path() + "/other.bin")->kind(),
            "sentencepiece");
  EXPECT_THROW(kvs::tokenizer::load_tokenizer_file(dir.path() + "/missing"), kvs::Error);
}

}  // namespace
