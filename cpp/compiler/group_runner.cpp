// The group runner: per-thread scratch (local memory, coroutine frames), the fault guard
// around each chunk of groups, the rounds that run a group's work-item coroutines from
// barrier to barrier.
#include "group_runner.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <new>

#include "fault_guard.hpp"
#include "work_pool.hpp"

namespace zehal::compiler {

namespace {

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

// The coroutine frames of one group, one after the other in one block that lasts the
// whole group (a frame may not move while its work-item is suspended). Every frame of a
// kernel has the same size: the first allocation of a group makes room for all of them.
class FrameArena {
public:
    // Forgets the frames of the last group; the next one has `count` work-items.
    void start(size_t count) {
        count_ = count;
        used_ = 0;
    }
    // `bytes` aligned to `align` for one work-item; null when there is no memory.
    uint8_t* allocate(size_t bytes, size_t align) {
        const size_t frame_align = std::max(align, kLocalAlign);
        if (frame_align > kMaxFrameAlign || bytes > kMaxFrameBytes) {
            return nullptr;
        }
        const size_t stride = align_up(std::max<size_t>(bytes, 1), frame_align);
        if (used_ == 0 && count_ > capacity_ / stride) {
            if (count_ > SIZE_MAX / stride) {
                return nullptr;
            }
            memory_.reset(
                static_cast<uint8_t*>(::operator new (stride* count_, std::align_val_t{kMaxFrameAlign}, std::nothrow)));
            capacity_ = memory_ ? stride * count_ : 0;
        }
        if (capacity_ - used_ < stride) {
            return nullptr;
        }
        uint8_t* frame = memory_.get() + used_;
        used_ += stride;
        return frame;
    }

private:
    // A frame larger than this (private arrays of megabytes per work-item) is refused.
    static constexpr size_t kMaxFrameBytes = size_t{1} << 30;
    static constexpr size_t kMaxFrameAlign = 4096;
    struct Free {
        void operator()(uint8_t* p) const { ::operator delete (p, std::align_val_t{kMaxFrameAlign}); }
    };
    std::unique_ptr<uint8_t, Free> memory_;
    size_t capacity_ = 0;
    size_t count_ = 0;
    size_t used_ = 0;
};

// The bounds of the calling thread's stack: the private memory of the work-items this
// thread runs (with, for a coroutine, its frame). Empty when the system cannot say (then
// no pointer on the stack counts as private).
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

// The work-items of one group as coroutines.
struct CoroutineGroup {
    FrameArena frames;
    std::vector<WorkItemContext> contexts;
    std::vector<void*> handles;  // the work-items not yet ended, in order
};

// What one thread keeps between groups.
struct ThreadScratch {
    Scratch local;
    CoroutineGroup coroutines;
    std::vector<void*> local_pointers;  // the group's __local arguments
    std::vector<void*> slots;           // the argument slots of the entry
    StackBounds stack = read_thread_stack();
};
thread_local ThreadScratch scratch;

// A chunk of groups' launch state, the argument of the guarded call.
struct GroupRun {
    const HostKernel* kernel = nullptr;
    const LaunchGrid* grid = nullptr;
    bool out_of_memory = false;  // a group's coroutine frames could not be allocated
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

bool run_coroutines(GroupRun* run);

void run_chunk(void* arg) {
    auto* run = static_cast<GroupRun*>(arg);
    for (run->current = run->first; run->current < run->end; ++run->current) {
        set_group(run->context, *run->grid, run->current);
        if (!run->kernel->per_work_item) {
            run->kernel->entry(run->slots, &run->context);
        } else if (!run_coroutines(run)) {
            run->out_of_memory = true;
            return;
        }
    }
}

// Runs the group of run->current as a coroutine per work-item, in rounds: each runs every
// work-item not yet ended to its next barrier or its end. False when a frame could not be
// allocated (then no work-item of the group has run).
bool run_coroutines(GroupRun* run) {
    CoroutineGroup& group = scratch.coroutines;
    const uint64_t* size = run->context.local_size;
    const size_t count = size[0] * size[1] * size[2];
    group.frames.start(count);
    group.contexts.assign(count, run->context);
    group.handles.resize(count);
    for (size_t i = 0; i < count; ++i) {
        WorkItemContext& c = group.contexts[i];
        c.local_id[0] = i % size[0];
        c.local_id[1] = (i / size[0]) % size[1];
        c.local_id[2] = i / (size[0] * size[1]);
        c.frames = &group.frames;
        group.handles[i] = run->kernel->start(run->slots, &c);
        if (group.handles[i] == nullptr) {
            return false;
        }
    }
    size_t left = count;
    while (left > 0) {
        size_t kept = 0;
        for (size_t i = 0; i < left; ++i) {
            if (run->kernel->resume(group.handles[i]) == 0) {
                group.handles[kept++] = group.handles[i];
            }
        }
        left = kept;
    }
    return true;
}

}  // namespace

extern "C" void* zehal_work_item_frame(WorkItemContext* context, uint64_t bytes, uint64_t align) {
    uint8_t* frame = static_cast<FrameArena*>(context->frames)->allocate(bytes, align);
    context->frame_begin = frame;
    context->frame_end = frame != nullptr ? frame + bytes : nullptr;
    return frame;
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
        Fault fault;
        const bool returned = run_guarded(run_chunk, &run, false, &fault);
        if (!returned || run.out_of_memory) {
            faulted.store(true, std::memory_order_relaxed);
            const std::string group = "group (" + std::to_string(c.group_id[0]) + ", " + std::to_string(c.group_id[1]) +
                                      ", " + std::to_string(c.group_id[2]) + ")";
            std::lock_guard lock(message_mutex);
            if (message.empty()) {
                message = returned ? "no memory for the coroutine frames of the " + std::to_string(items) +
                                         " work-items of " + group
                                   : "kernel faulted: " + fault.describe() + " in " + group;
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
