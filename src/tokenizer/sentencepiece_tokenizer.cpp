#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "core/error.h"
#include "core/float_bits.h"

namespace kvs::tokenizer {

namespace {

// The protobuf wire format, as much of it as a ModelProto needs.
class ProtoWriter {
 public:
  void varint(int field, uint64_t value) {
    key(field, 0);
    raw_varint(value);
  }
  void boolean(int field, bool value) { varint(field, value ? 1 : 0); }
  void bytes(int field, const std::string& value) {
    key(field, 2);
    raw_varint(value.size());
    out_ += value;
  }
  void float32(int field, float value) {
    key(field, 5);
    const uint32_t bits = bits_of(value);
    for (int shift = 0; shift < 32; shift += 8) out_ += static_cast<char>((bits >> shift) & 0xFF);
  }
  const std::string& str() const { return out_; }

 private:
  void key(int field, int wire_type) { raw_varint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void raw_varint(uint64_t value) {
    while (value >= 0x80) {
      out_ += static_cast<char>((value & 0x7F) | 0x80);
      value >>= 7;
    }
    out_ += static_cast<char>(value);
  }
  std::string out_;
};

// Field numbers of sentencepiece_model.proto.
std::string serialize_model(const SentencePieceDefinition& def) {
  const auto piece_text = [&](int32_t id, const char* role) {
    if (id < 0 || id >= static_cast<int32_t>(def.pieces.size()))
      throw error_at(def.source, std::string("the ") + role + " id " + std::to_string(id) +
                                     " is outside the vocabulary");
    return def.pieces[id].text;
  };
  ProtoWriter model;
  bool has_byte_pieces = false;
  for (const auto& piece : def.pieces) {
    ProtoWriter p;
    p.bytes(1, piece.text);
    p.float32(2, piece.score);
    p.varint(3, static_cast<uint64_t>(piece.type));
    model.bytes(1, p.str());
    has_byte_pieces = has_byte_pieces || piece.type == 6;
  }
  ProtoWriter trainer;
  trainer.varint(3, 2);  // model_type BPE
  trainer.varint(4, def.pieces.size());
  trainer.boolean(35, has_byte_pieces);  // byte_fallback
  trainer.varint(40, static_cast<uint64_t>(def.unk));
  trainer.varint(41, static_cast<uint64_t>(def.bos));
  trainer.varint(42, static_cast<uint64_t>(def.eos));
  trainer.bytes(45, piece_text(def.unk, "unknown-token"));
  trainer.bytes(46, piece_text(def.bos, "BOS"));
  trainer.bytes(47, piece_text(def.eos, "EOS"));
  model.bytes(2, trainer.str());
  ProtoWriter normalizer;
  normalizer.bytes(1, "identity");
  normalizer.boolean(3, def.add_dummy_prefix);
  normalizer.boolean(4, false);  // remove_extra_whitespaces
  normalizer.boolean(5, true);   // escape_whitespaces
  model.bytes(3, normalizer.str());
  return model.str();
}

class SentencePieceTokenizer : public Tokenizer {
 public:
  // A tokenizer.model file.
  explicit SentencePieceTokenizer(const std::string& path) {
    const auto status = sp_.Load(path);
    if (!status.ok()) throw error_at(path, "cannot load SentencePiece model: " + status.ToString());
    check_roles(path);
  }

  // A model built from its pieces.
  SentencePieceTokenizer(const std::string& source, const std::string& serialized, bool adds_bos)
      : adds_bos_(adds_bos) {
    const auto status = sp_.LoadFromSerializedProto(serialized);
    if (!status.ok())
      throw error_at(source, "cannot build a SentencePiece model from the vocabulary: " +
                                 status.ToString());
    check_roles(source);
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
  bool adds_bos() const override { return adds_bos_; }
  const std::vector<int32_t>& eos_ids() const override { return eos_; }
  int32_t vocab_size() const override { return sp_.GetPieceSize(); }
  std::string kind() const override { return "sentencepiece"; }

 private:
  void check_roles(const std::string& source) {
    if (sp_.bos_id() < 0) throw error_at(source, "SentencePiece model defines no BOS token");
    if (sp_.eos_id() < 0) throw error_at(source, "SentencePiece model defines no EOS token");
    eos_ = {sp_.eos_id()};
  }

  sentencepiece::SentencePieceProcessor sp_;
  std::vector<int32_t> eos_;
  bool adds_bos_ = true;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path) {
  if (!std::filesystem::exists(path)) throw error_at(path, "tokenizer file not found");
  return std::make_unique<SentencePieceTokenizer>(path);
}

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const SentencePieceDefinition& definition) {
  return std::make_unique<SentencePieceTokenizer>(definition.source, serialize_model(definition),
                                                  definition.adds_bos);
}

}  // namespace kvs::tokenizer
