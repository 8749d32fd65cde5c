// The fiber switch of fiber_switch.hpp: hand-written for x86-64 (System V ABI), swapcontext
// elsewhere.
#include "fiber_switch.hpp"

#include <cstdint>
#include <cstring>

namespace zehal::compiler {

#if ZEHAL_FIBER_SWITCH_ASM

// zehal_fiber_switch(save, load): pushes the callee-saved registers and the MXCSR and x87
// control words, stores the stack pointer at *save, then pops the same from the stack at
// `load` and returns there.
extern "C" void zehal_fiber_switch(void** save, void* load);
asm(R"(
    .text
    .p2align 4
    .globl zehal_fiber_switch
    .hidden zehal_fiber_switch
    .type zehal_fiber_switch, @function
zehal_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size zehal_fiber_switch, .-zehal_fiber_switch
)");

void fiber_prepare(FiberContext* fiber, void* stack, size_t bytes, void (*entry)()) {
    // The frame zehal_fiber_switch pops, at the top of the stack: the control words, six
    // registers (zero), and `entry` as the return address, placed so that `entry` starts
    // with the stack aligned as after a call (rsp + 8 a multiple of 16); above it, a null
    // return address for `entry`, which never returns.
    const auto top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t{15};
    auto* slots = reinterpret_cast<uint64_t*>(top) - 9;
    uint32_t mxcsr = 0;
    uint16_t x87 = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(x87));
    uint64_t words = mxcsr;
    words |= uint64_t{x87} << 32;
    slots[0] = words;
    for (int i = 1; i <= 6; ++i) slots[i] = 0;
    std::memcpy(&slots[7], &entry, sizeof entry);
    slots[8] = 0;
    fiber->sp = slots;
}

void fiber_switch(FiberContext* from, FiberContext* to) { zehal_fiber_switch(&from->sp, to->sp); }

#else

void fiber_prepare(FiberContext* fiber, void* stack, size_t bytes, void (*entry)()) {
    getcontext(&fiber->uc);
    fiber->uc.uc_stack.ss_sp = stack;
    fiber->uc.uc_stack.ss_size = bytes;
    fiber->uc.uc_link = nullptr;
    makecontext(&fiber->uc, entry, 0);
}

void fiber_switch(FiberContext* from, FiberContext* to) { swapcontext(&from->uc, &to->uc); }

#endif

}  // namespace zehal::compiler
