// Character properties of CPython's str and re, as tables generated from the interpreter by
// gen_unicode_tables.py (unicode_tables.cpp). text.h is the interface the scorer uses.
#pragma once

#include <cstddef>

namespace kvs::longbench::unicode {

struct Range {
  char32_t first;
  char32_t last;  // inclusive
};

struct RangeTable {
  const Range* data;  // sorted, disjoint
  size_t size;
};

// One code point's full lower-case mapping (str.lower), up to three code points, zero-padded.
struct LowerMapping {
  char32_t from;
  char32_t to[3];
};

struct LowerTable {
  const LowerMapping* data;  // sorted by `from`; code points absent here map to themselves
  size_t size;
};

extern const LowerTable kLower;        // every code point but U+03A3 (contextual)
extern const RangeTable kWhitespace;   // str.isspace()
extern const RangeTable kWordChars;    // re \w: str.isalnum() or '_'
extern const RangeTable kDecimalDigits;  // re \d: str.isdecimal()
extern const RangeTable kCaseIgnorable;  // Case_Ignorable
extern const RangeTable kCased;        // Cased, for characters that are not Case_Ignorable

bool in_table(const RangeTable& table, char32_t c);

}  // namespace kvs::longbench::unicode
