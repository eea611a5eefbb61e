# What keeps a clean build short on a small machine (a clean `make build` on 2 cores: README).
#
# 1. Precompiled headers: the heavy headers that most files include (the C++ library, nlohmann/json,
# GoogleTest, CLI11, LibTorch's ATen) are parsed once per target instead of once per file (ATen
# alone is about 8 of a tensor file's 14 s). `-DKVS_PRECOMPILED_HEADERS=OFF` builds without them,
# and so checks that every file includes what it uses.
option(KVS_PRECOMPILED_HEADERS "Precompile the heavy common headers of each target" ON)

set(KVS_PCH_STD <algorithm> <cmath> <cstdint> <cstdio> <filesystem> <fstream> <functional>
    <iostream> <map> <memory> <optional> <set> <sstream> <string> <unordered_map> <vector>)

# kvs_precompile_headers(TARGET [TORCH] [GTEST] [CLI11])
# kvs_precompile_headers(TARGET REUSE_FROM OTHER)
# TORCH adds <ATen/ATen.h>: only for targets whose files mostly use tensors (loading it costs about
# 2 s per file), and never where spdlog is included (log.cpp), since torch bundles its own fmt.
# REUSE_FROM shares OTHER's header, which needs the same compile flags (-fopenmp, the -D macros
# the headers test); GCC reports a header it cannot use (-Winvalid-pch) and parses the file instead.
function(kvs_precompile_headers target)
  if(NOT KVS_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(PCH "TORCH;GTEST;CLI11" "REUSE_FROM" "" ${ARGN})
  if(PCH_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${PCH_REUSE_FROM})
    return()
  endif()
  set(headers ${KVS_PCH_STD} <nlohmann/json.hpp>)
  if(PCH_TORCH)
    list(APPEND headers <ATen/ATen.h>)
  endif()
  if(PCH_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  if(PCH_CLI11)
    list(APPEND headers <CLI/CLI.hpp>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# 2. Code off the hot path is compiled at -O1 in optimized builds: command-line wiring, experiment
# bookkeeping, the results store, LongBench/RULER data and scoring, and the test suites. They run
# once per job or per answer, and -O3 costs them a third more compile time. The runner, eviction,
# tokenizer and search modules keep the build type's level. No -ffast-math anywhere, so the
# scores are the same at either level.
function(kvs_compile_off_hot_path target)
  if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()
