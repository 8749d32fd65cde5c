// The pool: a list of open jobs under one mutex; each thread claims task numbers of the
// oldest open job with an atomic counter.
#include "work_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace zehal::compiler {

namespace {

struct Job {
    size_t count = 0;
    const std::function<void(size_t)>* task = nullptr;
    // The next task number to claim; relaxed: each number is claimed once, the task's
    // data was published by the mutex that put the job in the list.
    std::atomic<size_t> next{0};
    // Tasks finished; acq_rel so that the submitter, seeing count, sees every task's writes.
    std::atomic<size_t> finished{0};
    std::mutex mutex;
    std::condition_variable all_done;
};

// Claims and runs tasks of `job` until none is left; true when this call ran its last.
void work_on(Job& job) {
    for (;;) {
        const size_t i = job.next.fetch_add(1, std::memory_order_relaxed);
        if (i >= job.count) {
            return;
        }
        (*job.task)(i);
        if (job.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job.count) {
            std::lock_guard lock(job.mutex);
            job.all_done.notify_all();
        }
    }
}

class Pool {
public:
    Pool() {
        const size_t workers = std::max<size_t>(1, std::thread::hardware_concurrency()) - 1;
        for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) {
            std::thread([this] { serve(); }).detach();
            ++workers_;
        }
    }

    void run(size_t count, const std::function<void(size_t)>& task) {
        auto job = std::make_shared<Job>();
        job->count = count;
        job->task = &task;
        {
            std::lock_guard lock(mutex_);
            open_.push_back(job);
        }
        wake_.notify_all();
        work_on(*job);
        {
            std::lock_guard lock(mutex_);
            open_.erase(std::remove(open_.begin(), open_.end(), job), open_.end());
        }
        std::unique_lock lock(job->mutex);
        job->all_done.wait(lock, [&] { return job->finished.load(std::memory_order_acquire) == job->count; });
    }

    size_t workers() const { return workers_; }

private:
    // A worker: takes the oldest job with tasks left, works on it, repeats.
    void serve() {
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] {
                    std::erase_if(open_, [](const std::shared_ptr<Job>& j) {
                        return j->next.load(std::memory_order_relaxed) >= j->count;
                    });
                    return !open_.empty();
                });
                job = open_.front();
            }
            work_on(*job);
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Job>> open_;  // guarded by mutex_
    size_t workers_ = 0;
};

// The process's pool, started on first use; never destroyed (its detached threads may
// outlive static destruction).
Pool& pool() {
    static Pool* instance = new Pool();
    return *instance;
}

}  // namespace

void run_on_pool(size_t count, const std::function<void(size_t)>& task) {
    if (count == 0) {
        return;
    }
    if (count == 1) {
        task(0);
        return;
    }
    pool().run(count, task);
}

size_t pool_workers() { return pool().workers(); }

}  // namespace zehal::compiler
