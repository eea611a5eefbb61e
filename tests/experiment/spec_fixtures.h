// Shared by the experiment tests: a small spec written to a scratch directory.
#pragma once

#include <fstream>
#include <string>

#include "common/scratch_dir.h"

namespace kvs::experiment::test_support {

// Two datasets, budgets 32 and 64, two fixed methods, a search at 64 and its transfer.
inline const char* kSpecJson = R"json({
  "name": "mini",
  "datasets": ["qasper", "hotpotqa"],
  "budgets": [32, 64],
  "dev_limit": 5,
  "methods": [
    {"name": "PyramidKV", "profile": "pyramid"},
    {"name": "Global", "profile": "global"},
    {"name": "Segments", "profile": "segments", "budgets": [64]},
    {"name": "Segments (B=64 profile)", "transfer": "Segments"}
  ],
  "tables": [
    {"name": "t1", "kind": "datasets", "budget": 64, "methods": ["PyramidKV", "Global", "Segments"],
     "reference": {"macro": {"Global": 34.44}}},
    {"name": "t2", "kind": "budgets", "methods": ["PyramidKV", "Global"], "baseline": "PyramidKV"},
    {"name": "t3", "kind": "methods", "budget": 64, "methods": ["PyramidKV", "Global", "Segments"],
     "baseline": "PyramidKV", "reference": {"Global": {"macro": 34.57, "better": 13}}}
  ]
})json";

inline std::string write_text(const kvs::test::ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace kvs::experiment::test_support
