// Switches between the work-items of a group (fibers) and the thread that schedules them.
// glibc's swapcontext saves and restores the signal mask with a system call at every
// switch (microseconds), which made kernels with barriers spend nearly all their time
// switching; on x86-64 a switch here saves only what a function call must keep (the
// callee-saved registers, the SSE and x87 control words) and the stack pointer. Elsewhere
// (and under AddressSanitizer) it is swapcontext.
#pragma once

#include <cstddef>

// The hand-written switch: x86-64, and not under AddressSanitizer, which follows stack
// switches through its swapcontext interceptor (fiber stacks are reused from kernel to
// kernel, and their stale shadow would be reported).
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define ZEHAL_FIBER_SWITCH_ASM 1
#else
#define ZEHAL_FIBER_SWITCH_ASM 0
#include <ucontext.h>
#endif

namespace zehal::compiler {

// One side of a switch: a fiber, or the thread that runs them.
struct FiberContext {
#if ZEHAL_FIBER_SWITCH_ASM
    void* sp = nullptr;  // where the switch left its saved registers
#else
    ucontext_t uc;
#endif
};

// Makes `fiber` start `entry` on [stack, stack + bytes) at the first switch to it. `entry`
// must never return: a fiber that is done switches away for good.
void fiber_prepare(FiberContext* fiber, void* stack, size_t bytes, void (*entry)());

// Saves the running context in `from` and resumes `to`; returns when something switches
// back to `from`. The signal mask is left as it is.
void fiber_switch(FiberContext* from, FiberContext* to);

}  // namespace zehal::compiler
