// The group runner: per-thread scratch (local memory, fibers), the fault guard around each
// group, fibers switched by fiber_switch.
#include "group_runner.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "fault_guard.hpp"
#include "fiber_switch.hpp"
#include "work_pool.hpp"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace zehal::compiler {

namespace {

// ThreadSanitizer follows stack switches only when told: each fiber gets a TSan fiber,
// and every switch says where it goes. Nothing in other builds.
#if defined(__SANITIZE_THREAD__)
struct SanitizerFibers {
    void* scheduler = nullptr;
    std::vector<void*> fibers;
    void create(size_t count) {
        scheduler = __tsan_get_current_fiber();
        for (size_t i = 0; i < count; ++i) {
            fibers.push_back(__tsan_create_fiber(0));
        }
    }
    void to_fiber(size_t i) const { __tsan_switch_to_fiber(fibers[i], 0); }
    void to_scheduler() const { __tsan_switch_to_fiber(scheduler, 0); }
    void destroy() {
        for (void* fiber : fibers) {
            __tsan_destroy_fiber(fiber);
        }
        fibers.clear();
    }
};
#else
struct SanitizerFibers {
    void create(size_t) {}
    void to_fiber(size_t) const {}
    void to_scheduler() const {}
    void destroy() {}
};
#endif

constexpr size_t kFiberStackBytes = 128 * 1024;
constexpr size_t kLocalAlign = 64;
constexpr size_t kChunksPerThread = 8;

size_t align_up(size_t value, size_t align) { return (value + align - 1) / align * align; }

// Memory that keeps its alignment and grows on demand (contents are not kept).
class Scratch {
public:
    uint8_t* get(size_t bytes) {
        if (bytes > size_) {
            memory_.reset(static_cast<uint8_t*>(::operator new (bytes, std::align_val_t{kLocalAlign})));
            size_ = bytes;
        }
        return memory_.get();
    }

private:
    struct Free {
        void operator()(uint8_t* p) const { ::operator delete (p, std::align_val_t{kLocalAlign}); }
    };
    std::unique_ptr<uint8_t, Free> memory_;
    size_t size_ = 0;
};

// Fiber stacks of one thread: one mapping, a guard page below each stack.
class FiberStacks {
public:
    ~FiberStacks() {
        if (base_ != nullptr) {
            munmap(base_, count_ * stride());
        }
    }
    // The stack of fiber `i`, for `count` fibers; null when they cannot be mapped.
    uint8_t* stack(size_t i) const { return static_cast<uint8_t*>(base_) + i * stride() + page(); }
    bool reserve(size_t count) {
        if (count <= count_) {
            return true;
        }
        if (base_ != nullptr) {
            munmap(base_, count_ * stride());
            base_ = nullptr;
            count_ = 0;
        }
        void* base = mmap(nullptr, count * stride(), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) {
            return false;
        }
        for (size_t i = 0; i < count; ++i) {
            mprotect(static_cast<uint8_t*>(base) + i * stride(), page(), PROT_NONE);
        }
        base_ = base;
        count_ = count;
        return true;
    }
    static size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
    static size_t stride() { return kFiberStackBytes + page(); }

private:
    void* base_ = nullptr;
    size_t count_ = 0;
};

// The bounds of the calling thread's stack: the private memory of the work-items a group
// entry runs in a loop on this thread. Empty when the system cannot say (then no pointer
// counts as private).
struct StackBounds {
    uint8_t* begin = nullptr;
    uint8_t* end = nullptr;
};

StackBounds read_thread_stack() {
    StackBounds bounds;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
        return bounds;
    }
    void* base = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
        bounds.begin = static_cast<uint8_t*>(base);
        bounds.end = bounds.begin + size;
    }
    pthread_attr_destroy(&attr);
    return bounds;
}

// The work-items of one group as fibers.
struct FiberGroup {
    GroupEntry entry = nullptr;
    void* const* slots = nullptr;
    FiberContext scheduler;
    std::vector<FiberContext> fibers;
    std::vector<WorkItemContext> contexts;
    std::vector<uint8_t> finished;
    size_t current = 0;
    SanitizerFibers sanitizer;
};

thread_local FiberGroup* starting_group = nullptr;

// A fiber's first frame: runs its work-item, then switches to the scheduler for good.
void fiber_main() {
    FiberGroup* group = starting_group;
    const size_t i = group->current;
    group->entry(group->slots, &group->contexts[i]);
    group->finished[i] = 1;
    group->sanitizer.to_scheduler();
    fiber_switch(&group->fibers[i], &group->scheduler);
    __builtin_unreachable();
}

// What one thread keeps between groups.
struct ThreadScratch {
    Scratch local;
    FiberStacks stacks;
    FiberGroup fibers;
    std::vector<void*> local_pointers;  // the group's __local arguments
    std::vector<void*> slots;           // the argument slots of the entry
    StackBounds stack = read_thread_stack();
};
thread_local ThreadScratch scratch;

// A chunk of groups' launch state, the argument of the guarded call.
struct GroupRun {
    const HostKernel* kernel = nullptr;
    const LaunchGrid* grid = nullptr;
    WorkItemContext context{};
    void* const* slots = nullptr;
    size_t first = 0;  // the chunk's groups, in linear order
    size_t end = 0;
    size_t current = 0;  // the group running
};

void set_group(WorkItemContext& c, const LaunchGrid& grid, size_t g) {
    c.group_id[0] = g % grid.group_count[0];
    c.group_id[1] = (g / grid.group_count[0]) % grid.group_count[1];
    c.group_id[2] = g / (uint64_t{grid.group_count[0]} * grid.group_count[1]);
}

void run_fibers(GroupRun* run);

void run_chunk(void* arg) {
    auto* run = static_cast<GroupRun*>(arg);
    for (run->current = run->first; run->current < run->end; ++run->current) {
        set_group(run->context, *run->grid, run->current);
        if (run->kernel->per_work_item) {
            run_fibers(run);
        } else {
            run->kernel->entry(run->slots, &run->context);
        }
    }
}

void run_fibers(GroupRun* run) {
    FiberGroup& group = scratch.fibers;
    const uint64_t* size = run->context.local_size;
    const size_t count = size[0] * size[1] * size[2];
    group.entry = run->kernel->entry;
    group.slots = run->slots;
    group.fibers.resize(count);
    group.contexts.assign(count, run->context);
    group.finished.assign(count, 0);
    for (size_t i = 0; i < count; ++i) {
        WorkItemContext& c = group.contexts[i];
        c.local_id[0] = i % size[0];
        c.local_id[1] = (i / size[0]) % size[1];
        c.local_id[2] = i / (size[0] * size[1]);
        c.private_begin = scratch.stacks.stack(i);
        c.private_end = c.private_begin + kFiberStackBytes;
        c.fiber = &group;
        fiber_prepare(&group.fibers[i], scratch.stacks.stack(i), kFiberStackBytes, fiber_main);
    }
    group.sanitizer.destroy();
    group.sanitizer.create(count);
    // Rounds: each runs every unfinished work-item to its next barrier or its end.
    size_t left = count;
    while (left > 0) {
        left = 0;
        for (size_t i = 0; i < count; ++i) {
            if (group.finished[i] != 0) {
                continue;
            }
            group.current = i;
            starting_group = &group;
            group.sanitizer.to_fiber(i);
            fiber_switch(&group.scheduler, &group.fibers[i]);
            left += group.finished[i] == 0 ? 1 : 0;
        }
    }
}

}  // namespace

extern "C" void zehal_work_group_barrier(WorkItemContext* context) {
    auto* group = static_cast<FiberGroup*>(context->fiber);
    if (group == nullptr) {
        return;  // a kernel without barriers in its own code reaches none at run time
    }
    group->sanitizer.to_scheduler();
    fiber_switch(&group->fibers[group->current], &group->scheduler);
}

ze_result_t run_groups(const HostKernel& kernel, uint64_t local_bytes, const LaunchArgs& args, const LaunchGrid& grid,
                       std::string* error) {
    const size_t arg_count = kernel.args.size();
    if (args.values.size() < arg_count || (args.local_sizes.size() < arg_count && !args.local_sizes.empty())) {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // The group's memory: static __local variables, then each __local argument.
    std::vector<size_t> local_offset(arg_count, 0);
    size_t group_bytes = align_up(local_bytes, kLocalAlign);
    for (size_t i = 0; i < arg_count; ++i) {
        if (kernel.args[i].kind == ArgKind::local) {
            const size_t bytes = args.local_sizes.empty() ? 0 : args.local_sizes[i];
            local_offset[i] = group_bytes;
            group_bytes += align_up(std::max<size_t>(bytes, 1), kLocalAlign);
        } else if (args.values[i] == nullptr) {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
    }
    uint64_t items = 1;
    uint64_t groups = 1;
    for (int d = 0; d < 3; ++d) {
        if (grid.group_size[d] == 0 || grid.group_count[d] == 0) {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        items *= grid.group_size[d];
        groups *= grid.group_count[d];
    }
    if (kernel.per_work_item && items > kMaxFiberGroupItems) {
        return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    }
    const uint64_t work_dim = grid.group_size[2] * grid.group_count[2] > 1   ? 3
                              : grid.group_size[1] * grid.group_count[1] > 1 ? 2
                                                                             : 1;
    // The first fault, and whether one happened (relaxed: the pool's completion publishes
    // `message`; the flag only lets the other groups stop early).
    std::atomic<bool> faulted{false};
    std::mutex message_mutex;
    std::string message;
    // Chunks of groups, several per thread so that threads that start late or are busy
    // elsewhere still share the work.
    const size_t chunk = std::max<size_t>(1, groups / ((pool_workers() + 1) * kChunksPerThread));
    const size_t chunks = (groups + chunk - 1) / chunk;
    run_on_pool(chunks, [&](size_t k) {
        if (faulted.load(std::memory_order_relaxed)) {
            return;
        }
        ThreadScratch& s = scratch;
        uint8_t* memory = s.local.get(group_bytes);
        s.local_pointers.assign(arg_count, nullptr);
        s.slots.assign(arg_count, nullptr);
        for (size_t i = 0; i < arg_count; ++i) {
            if (kernel.args[i].kind == ArgKind::local) {
                s.local_pointers[i] = memory + local_offset[i];
                s.slots[i] = &s.local_pointers[i];
            } else {
                s.slots[i] = const_cast<void*>(args.values[i]);
            }
        }
        GroupRun run;
        run.kernel = &kernel;
        run.grid = &grid;
        run.slots = s.slots.data();
        run.first = k * chunk;
        run.end = std::min<size_t>(groups, run.first + chunk);
        WorkItemContext& c = run.context;
        for (int d = 0; d < 3; ++d) {
            c.local_size[d] = grid.group_size[d];
            c.num_groups[d] = grid.group_count[d];
            c.global_offset[d] = grid.global_offset[d];
        }
        c.work_dim = work_dim;
        c.local_memory = memory;
        c.local_bytes = group_bytes;
        c.private_begin = s.stack.begin;
        c.private_end = s.stack.end;
        if (kernel.per_work_item && !s.stacks.reserve(items)) {
            faulted.store(true, std::memory_order_relaxed);
            std::lock_guard lock(message_mutex);
            message = "cannot map the fiber stacks of a group of " + std::to_string(items) + " work-items";
            return;
        }
        Fault fault;
        if (!run_guarded(run_chunk, &run, false, &fault)) {
            faulted.store(true, std::memory_order_relaxed);
            std::lock_guard lock(message_mutex);
            if (message.empty()) {
                message = "kernel faulted: " + fault.describe() + " in group (" + std::to_string(c.group_id[0]) + ", " +
                          std::to_string(c.group_id[1]) + ", " + std::to_string(c.group_id[2]) + ")";
            }
        }
    });
    if (faulted.load(std::memory_order_relaxed)) {
        if (error != nullptr) {
            *error = message;
        }
        return ZE_RESULT_ERROR_UNKNOWN;
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
