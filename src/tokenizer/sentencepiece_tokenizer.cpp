#include <sentencepiece_processor.h>

#include <filesystem>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path) {
    const auto status = sp_.Load(path);
    if (!status.ok()) throw error_at(path, "cannot load SentencePiece model: " + status.ToString());
    if (sp_.bos_id() < 0) throw error_at(path, "SentencePiece model defines no BOS token");
    if (sp_.eos_id() < 0) throw error_at(path, "SentencePiece model defines no EOS token");
    eos_ = {sp_.eos_id()};
  }

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int> ids;
    const auto status = sp_.Encode(text, &ids);
    if (!status.ok()) throw Error("tokenizer: cannot encode text: " + status.ToString());
    return {ids.begin(), ids.end()};
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special) const override {
    const int n = sp_.GetPieceSize();
    std::string out;
    std::vector<int> run;  // consecutive ordinary ids decode together (byte pieces join up)
    auto flush = [&] {
      if (run.empty()) return;
      std::string text;
      const auto status = sp_.Decode(run, &text);
      if (!status.ok()) throw Error("tokenizer: cannot decode ids: " + status.ToString());
      // SentencePiece drops the space of a leading "▁" in every run; HF only at the start of
      // the text, so a run after a rendered control token keeps it.
      if (!out.empty() && sp_.IdToPiece(run.front()).rfind("\xE2\x96\x81", 0) == 0) out += ' ';
      out += text;
      run.clear();
    };
    for (int32_t id : ids) {
      if (id < 0 || id >= n)
        throw Error("tokenizer: id " + std::to_string(id) + " outside the vocabulary of " +
                    std::to_string(n));
      if (sp_.IsControl(id)) {
        // Skipped control tokens do not split the run: HF drops them before decoding the rest.
        if (skip_special) continue;
        flush();
        out += sp_.IdToPiece(id);
        continue;
      }
      run.push_back(id);
    }
    flush();
    return out;
  }

  std::optional<int32_t> special_token_id(const std::string& text) const override {
    const int id = sp_.PieceToId(text);
    // PieceToId answers unk for unknown text: only a control piece spelled exactly so counts.
    if (id < 0 || id >= sp_.GetPieceSize() || !sp_.IsControl(id) || sp_.IdToPiece(id) != text)
      return std::nullopt;
    return id;
  }

  int32_t bos_id() const override { return sp_.bos_id(); }
  const std::vector<int32_t>& eos_ids() const override { return eos_; }
  int32_t vocab_size() const override { return sp_.GetPieceSize(); }
  std::string kind() const override { return "sentencepiece"; }

 private:
  sentencepiece::SentencePieceProcessor sp_;
  std::vector<int32_t> eos_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path) {
  if (!std::filesystem::exists(path)) throw error_at(path, "tokenizer file not found");
  return std::make_unique<SentencePieceTokenizer>(path);
}

}  // namespace kvs::tokenizer
