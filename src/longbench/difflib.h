// A port of CPython's difflib.SequenceMatcher for the case fuzzywuzzy uses (isjunk=None,
// autojunk=True) on strings of code points. Exactness matters: the LongBench code metric rounds
// 100 * ratio(), so any other matching algorithm changes scores. What the port keeps:
// - autojunk: when b has at least 200 elements, every element occurring more than
//   len(b) // 100 + 1 times in b is "popular" and never starts a match (it can still extend one);
// - find_longest_match returns the longest block that starts earliest in a, then earliest in b;
// - get_matching_blocks recurses on both sides of each longest match.
#pragma once

#include <string>
#include <string_view>

namespace kvs::longbench {

// Total size of SequenceMatcher(None, a, b).get_matching_blocks().
size_t difflib_matching_characters(std::u32string_view a, std::u32string_view b);

// SequenceMatcher(None, a, b).ratio(): 2 * matches / (len(a) + len(b)), 1.0 when both are empty.
double difflib_ratio(std::u32string_view a, std::u32string_view b);

}  // namespace kvs::longbench
