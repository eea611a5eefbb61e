// Tasks 0 .. count - 1 spread over LibTorch's intra-op threads, each thread taking the next one as
// it finishes its last: tasks of unequal size, or one thread slowed by its neighbours on a shared
// host, no longer hold the other threads at the barrier. The decode projections, decode attention
// and the fused prefill attention hand out their blocks this way.
#pragma once

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdint>

namespace kvs::cpu {

// task(i, state) for every i, where state is its thread's own make_state(), made once per thread.
template <typename MakeState, typename Task>
void for_each_task(int64_t count, const MakeState& make_state, const Task& task) {
  std::atomic<int64_t> next{0};
  at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
    auto state = make_state();
    for (int64_t i = next++; i < count; i = next++) task(i, state);
  });
}

template <typename Task>
void for_each_task(int64_t count, const Task& task) {
  for_each_task(
      count, [] { return 0; }, [&](int64_t i, int) { task(i); });
}

}  // namespace kvs::cpu
