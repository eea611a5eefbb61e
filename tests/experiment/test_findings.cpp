// The findings line of a budget, from hand-made comparisons: the largest surviving differences
// first, the better method first (a comparison whose B wins is turned around, with its interval
// and W/L/T), each winner once with every method it beats by the same numbers, at most
// `per_budget` winners, and none of the comparisons that do not survive.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiment/findings.h"

namespace kvs::experiment {
namespace {

TableComparison comparison(const std::string& a, const std::string& b, double difference,
                           int64_t wins, int64_t losses, double p_holm) {
  TableComparison c;
  c.dataset = "qasper";
  c.budget = 64;
  c.a = a;
  c.b = b;
  c.paired.difference.value = difference;
  c.paired.difference.low = difference - 5;
  c.paired.difference.high = difference + 5;
  c.paired.wins = wins;
  c.paired.losses = losses;
  c.paired.ties = 10;
  c.p_holm = p_holm;
  c.survives = p_holm <= 0.05;
  return c;
}

TEST(Findings, LargestSurvivingDifferencesEachWinnerOnceBetterMethodFirst) {
  TableSpec table;
  table.name = "t";
  const std::vector<TableComparison> comparisons = {
      comparison("Zero", "Best", -50, 0, 20, 0.001),  // Best wins: turned around
      comparison("Best", "Nil", 50, 20, 0, 0.001),    // the same numbers: named together
      comparison("Best", "Low", 30, 12, 0, 0.01),     // Best's smaller one: left out
      comparison("Second", "Zero", 40, 16, 0, 0.002), comparison("Third", "Zero", 35, 14, 0, 0.003),
      comparison("Fourth", "Zero", 34, 14, 0, 0.003),  // a fourth winner: past per_budget
      comparison("Huge", "Zero", 90, 3, 0, 0.2)};      // does not survive
  const std::string text = findings_section(table, comparisons, 3);
  EXPECT_NE(text.find("- **B = 64**: 6 of 7 differences between two methods survive; the largest "
                      "(each winner once): Best over Zero and Nil on qasper: +50.00 [+45.00, "
                      "+55.00] (20/0/10, p Holm 0.0010); Second over Zero on qasper: +40.00 "
                      "[+35.00, +45.00] (16/0/10, p Holm 0.0020); Third over Zero on qasper: "
                      "+35.00 [+30.00, +40.00] (14/0/10, p Holm 0.0030).\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Fourth"), std::string::npos);
  EXPECT_EQ(text.find("Huge"), std::string::npos);
  EXPECT_EQ(findings_section(table, {}), "");
}

}  // namespace
}  // namespace kvs::experiment
