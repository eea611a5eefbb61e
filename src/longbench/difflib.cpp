#include "longbench/difflib.h"

#include <iterator>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace kvs::longbench {

namespace {

struct Match {
  size_t i, j, size;
};

class SequenceMatcher {
 public:
  SequenceMatcher(std::u32string_view a, std::u32string_view b) : a_(a), b_(b) {
    for (size_t j = 0; j < b_.size(); ++j) b2j_[b_[j]].push_back(j);
    if (b_.size() >= 200) {
      const size_t ntest = b_.size() / 100 + 1;
      for (auto it = b2j_.begin(); it != b2j_.end();) {
        it = it->second.size() > ntest ? b2j_.erase(it) : std::next(it);
      }
    }
    j2len_.assign(b_.size() + 1, 0);
    new_j2len_.assign(b_.size() + 1, 0);
  }

  // Longest matching block in a[alo:ahi] and b[blo:bhi]; ties go to the smallest i, then j.
  Match find_longest_match(size_t alo, size_t ahi, size_t blo, size_t bhi) {
    size_t besti = alo, bestj = blo, bestsize = 0;
    // j2len[j + 1] = length of the match ending at a[i - 1], b[j] (difflib's j2len dict keyed
    // by j, shifted by one so that j - 1 = -1 needs no special case). Only the entries touched in
    // the previous row are non-zero; they are cleared as the rows advance.
    std::vector<size_t> touched, new_touched;
    for (size_t i = alo; i < ahi; ++i) {
      new_touched.clear();
      const auto found = b2j_.find(a_[i]);
      if (found != b2j_.end()) {
        for (size_t j : found->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const size_t k = j2len_[j] + 1;
          new_j2len_[j + 1] = k;
          new_touched.push_back(j + 1);
          if (k > bestsize) besti = i + 1 - k, bestj = j + 1 - k, bestsize = k;
        }
      }
      for (size_t t : touched) j2len_[t] = 0;
      for (size_t t : new_touched) j2len_[t] = new_j2len_[t], new_j2len_[t] = 0;
      std::swap(touched, new_touched);
    }
    for (size_t t : touched) j2len_[t] = 0;
    // Extend over equal elements on both sides: with no junk function this is what lets a match
    // run through popular elements.
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) --besti, --bestj, ++bestsize;
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           a_[besti + bestsize] == b_[bestj + bestsize]) {
      ++bestsize;
    }
    return {besti, bestj, bestsize};
  }

  size_t matching_characters() {
    size_t total = 0;
    std::vector<std::tuple<size_t, size_t, size_t, size_t>> queue{{0, a_.size(), 0, b_.size()}};
    while (!queue.empty()) {
      const auto [alo, ahi, blo, bhi] = queue.back();
      queue.pop_back();
      const Match m = find_longest_match(alo, ahi, blo, bhi);
      if (m.size == 0) continue;
      total += m.size;
      if (alo < m.i && blo < m.j) queue.emplace_back(alo, m.i, blo, m.j);
      if (m.i + m.size < ahi && m.j + m.size < bhi)
        queue.emplace_back(m.i + m.size, ahi, m.j + m.size, bhi);
    }
    return total;
  }

 private:
  std::u32string_view a_, b_;
  std::unordered_map<char32_t, std::vector<size_t>> b2j_;
  std::vector<size_t> j2len_, new_j2len_;
};

}  // namespace

size_t difflib_matching_characters(std::u32string_view a, std::u32string_view b) {
  return SequenceMatcher(a, b).matching_characters();
}

double difflib_ratio(std::u32string_view a, std::u32string_view b) {
  const size_t length = a.size() + b.size();
  if (length == 0) return 1.0;
  return 2.0 * static_cast<double>(difflib_matching_characters(a, b)) / static_cast<double>(length);
}

}  // namespace kvs::longbench
