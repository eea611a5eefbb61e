#include "tokenizer/unicode_normalize.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "core/error.h"

namespace kvs::tokenizer {

std::string nfc(std::string_view utf8) {
  if (std::all_of(utf8.begin(), utf8.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(utf8);
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = icu::Normalizer2::getNFCInstance(status);
  if (U_FAILURE(status))
    throw Error(std::string("ICU's NFC normalizer is unavailable: ") + u_errorName(status));
  const icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size())));
  if (normalizer->isNormalized(text, status) && U_SUCCESS(status)) return std::string(utf8);
  status = U_ZERO_ERROR;
  const icu::UnicodeString normalized = normalizer->normalize(text, status);
  if (U_FAILURE(status))
    throw Error(std::string("NFC normalization failed: ") + u_errorName(status));
  std::string out;
  normalized.toUTF8String(out);
  return out;
}

}  // namespace kvs::tokenizer
