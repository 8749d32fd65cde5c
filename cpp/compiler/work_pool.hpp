// The compiler's thread pool: one worker per core, shared by every kernel run of the
// process. A job is `count` numbered tasks; the submitting thread works on its own job
// too, so a job finishes even while every worker is busy with others.
#pragma once

#include <cstddef>
#include <functional>

namespace zehal::compiler {

// Runs task(i) for each i in [0, count) on the pool and the calling thread; returns when
// every task returned. Tasks of one job run in parallel and in no particular order.
void run_on_pool(size_t count, const std::function<void(size_t)>& task);

// Threads of the pool besides the caller (hardware threads - 1, at least 1).
size_t pool_workers();

}  // namespace zehal::compiler
