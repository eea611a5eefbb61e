#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"
#include "tokenizer/hf_tokenizer_json.h"
#include "tokenizer/tiktoken_reader.h"

namespace {

using kvs::test::error_of;
using nlohmann::json;

// GPT-2's byte-to-unicode map, written out independently of the reader.
std::string byte_level(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    int cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
      int n = 0;
      for (int c = 0; c < b; ++c)
        if (!((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE)) ++n;
      cp = 256 + n;
    }
    if (cp < 0x80) {
      out += char(cp);
    } else {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

// A Llama-3-shaped tokenizer.json: the 256 bytes, `merged` tokens with their merges, the Llama-3
// pattern and the named special tokens.
json small_tokenizer_json(const std::vector<std::pair<std::string, std::string>>& merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level(std::string(1, char(b)))] = b;
  json merge_list = json::array();
  int id = 256;
  for (const auto& [a, b] : merges) {
    vocab[byte_level(a + b)] = id++;
    merge_list.push_back(byte_level(a) + " " + byte_level(b));
  }
  json added = json::array();
  int special = id;
  for (const char* name : {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                           "<|end_header_id|>", "<|eot_id|>"})
    added.push_back({{"id", special++},
                     {"content", name},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  return {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern", {{"Regex", kvs::tokenizer::llama3_pattern()}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"},
           {"add_prefix_space", false},
           {"trim_offsets", true},
           {"use_regex", false}}}}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"byte_fallback", false},
        {"ignore_merges", true},
        {"vocab", vocab},
        {"merges", merge_list}}},
  };
}

const std::vector<std::pair<std::string, std::string>> kMerges = {
    {"a", "b"}, {" ", "a"}, {"ab", "c"}, {" a", "b"}, {" ab", "c"}, {"\xC3", "\xA9"}};

class HfTokenizerJson : public ::testing::Test {
 protected:
  kvs::test::ScratchDir dir;
  std::string write(const json& j) { return dir.write("tokenizer.json", j.dump(2)); }
  std::string load_error(const json& j) {
    const auto path = write(j);
    return error_of([&] { kvs::tokenizer::load_hf_tokenizer_json(path); });
  }
};

TEST_F(HfTokenizerJson, EncodesLikeTheSameRanksInTiktokenFormat) {
  const auto from_json =
      kvs::tokenizer::load_hf_tokenizer_json(write(small_tokenizer_json(kMerges)));
  std::vector<std::string> merged;
  for (const auto& [a, b] : kMerges) merged.push_back(a + b);
  const auto from_tiktoken =
      kvs::tokenizer::load_tiktoken(dir.write("t.model", kvs::test::small_tiktoken(merged)));
  for (const std::string text :
       {"abc abc", " abcab", "caf\xC3\xA9 \xC3\xA9t\xC3\xA9", "x\n\n  y"}) {
    EXPECT_EQ(from_json->encode(text), from_tiktoken->encode(text)) << text;
    EXPECT_EQ(from_json->decode(from_json->encode(text)), text);
  }
  EXPECT_EQ(from_json->encode("abc abc"), (std::vector<int32_t>{258, 260}));
  EXPECT_EQ(from_json->bos_id(), 262);
  EXPECT_EQ(from_json->encode_with_special("<|eot_id|>"), (std::vector<int32_t>{266}));
  EXPECT_EQ(from_json->vocab_size(), 267);
}

TEST_F(HfTokenizerJson, MissingSpecialTokenNamesFileAndLine) {
  auto j = small_tokenizer_json(kMerges);
  j["added_tokens"].erase(0);  // drop <|begin_of_text|>
  const auto message = load_error(j);
  // dump(2) puts "added_tokens" on line 2.
  EXPECT_NE(message.find("tokenizer.json:2: no special token <|begin_of_text|>"), std::string::npos)
      << message;
}

TEST_F(HfTokenizerJson, MergesOutOfRankOrderAreRejected) {
  auto j = small_tokenizer_json(kMerges);
  std::swap(j["model"]["merges"][1], j["model"]["merges"][2]);
  const auto message = load_error(j);
  EXPECT_NE(message.find("not in rank order"), std::string::npos) << message;
  EXPECT_NE(message.find("model.merges[2]"), std::string::npos) << message;
}

TEST_F(HfTokenizerJson, MergeOfUnknownTokenIsRejected) {
  auto j = small_tokenizer_json(kMerges);
  j["model"]["merges"].push_back("x y");
  EXPECT_NE(load_error(j).find("forms a token that is not in model.vocab"), std::string::npos)
      << load_error(j);
}

TEST_F(HfTokenizerJson, UnsupportedFeaturesAreNamed) {
  auto normalizer = small_tokenizer_json(kMerges);
  normalizer["normalizer"] = {{"type", "NFKC"}};
  EXPECT_NE(
      load_error(normalizer).find("normalizer {\"type\":\"NFKC\"} is not supported (null or NFC)"),
      std::string::npos)
      << load_error(normalizer);
  auto unknown_step = small_tokenizer_json(kMerges);
  unknown_step["pre_tokenizer"]["pretokenizers"][0] = {{"type", "Metaspace"}};
  EXPECT_NE(load_error(unknown_step).find("unsupported pre-tokenizer 'Metaspace'"),
            std::string::npos);
  auto sentencepiece_style = small_tokenizer_json(kMerges);
  sentencepiece_style["model"]["byte_fallback"] = true;
  EXPECT_NE(load_error(sentencepiece_style).find("byte_fallback"), std::string::npos);
  auto lstrip = small_tokenizer_json(kMerges);
  lstrip["added_tokens"][1]["lstrip"] = true;
  EXPECT_NE(load_error(lstrip).find("sets lstrip"), std::string::npos);
}

// GPT-2 style (SmolLM2's): Sequence[Digits(individual_digits), ByteLevel(use_regex)],
// ignore_merges false, the roles in tokenizer_config.json.
json gpt2_style_json(const std::vector<std::pair<std::string, std::string>>& merges) {
  auto j = small_tokenizer_json(merges);
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Digits"}, {"individual_digits", true}},
                          {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}}}}};
  j["model"]["ignore_merges"] = false;
  j["added_tokens"] = json::array({{{"id", 33}, {"content", "!"}, {"special", true}}});
  return j;
}

TEST_F(HfTokenizerJson, Gpt2StyleMergesBottomUpWithTheListAndSplitsDigits) {
  // "ab c" is listed but "a bc" is not: "abc" forms through ab only. "1" "2" merge to "12" but
  // the digits are split first.
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"a", "b"}, {"ab", "c"}, {"1", "2"}, {" ", "a"}};
  dir.write("tokenizer_config.json", R"({"bos_token": null, "eos_token": "!"})");
  const auto tok = kvs::tokenizer::load_hf_tokenizer_json(write(gpt2_style_json(merges)));
  EXPECT_EQ(tok->encode("abc"), (std::vector<int32_t>{257}));
  EXPECT_EQ(tok->encode("12"), (std::vector<int32_t>{'1', '2'}));
  EXPECT_EQ(tok->encode(" a1"), (std::vector<int32_t>{259, '1'}));
  EXPECT_EQ(tok->eos_ids(), (std::vector<int32_t>{33}));
  EXPECT_FALSE(tok->adds_bos());
  EXPECT_EQ(tok->decode(tok->encode("x ab12c")), "x ab12c");
}

TEST_F(HfTokenizerJson, Gpt2StyleNeedsItsRolesNamed) {
  const auto message = load_error(gpt2_style_json(kMerges));
  EXPECT_NE(message.find("no tokenizer_config.json beside the file"), std::string::npos) << message;
  dir.write("tokenizer_config.json", R"({"eos_token": "<|im_end|>"})");
  const auto unknown = load_error(gpt2_style_json(kMerges));
  EXPECT_NE(unknown.find("tokenizer_config.json: eos_token '<|im_end|>' is not a token"),
            std::string::npos)
      << unknown;
}

TEST_F(HfTokenizerJson, InvalidJsonNamesTheLine) {
  const auto path =
      dir.write("tokenizer.json", "{\n  \"model\": {\n    \"type\": \"BPE\",,\n  }\n}\n");
  const auto message = error_of([&] { kvs::tokenizer::load_hf_tokenizer_json(path); });
  EXPECT_NE(message.find("tokenizer.json:3: invalid JSON"), std::string::npos) << message;
}

}  // namespace
