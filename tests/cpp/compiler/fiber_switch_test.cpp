// The fiber switch of the group runner (fiber_switch.hpp): a fiber resumes where it left
// off with its locals, and a switch leaves the thread's signal mask as it is (swapcontext
// would put back the mask of the moment the fiber was prepared, with a system call).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <cstdint>
#include <vector>

#include "fiber_switch.hpp"

namespace zehal::compiler {
namespace {

FiberContext scheduler;
FiberContext fiber;
std::vector<int> steps;
bool blocked_inside = false;

// Three rounds, each a switch back to the scheduler; then the mask it runs with.
void rounds() {
    volatile double x = 1.5;  // a local across switches
    for (int i = 0; i < 3; ++i) {
        steps.push_back(i);
        fiber_switch(&fiber, &scheduler);
        x = x * 2;
    }
    steps.push_back(static_cast<int>(x));
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, nullptr, &now);
    blocked_inside = sigismember(&now, SIGUSR2) == 1;
    fiber_switch(&fiber, &scheduler);
    __builtin_unreachable();
}

TEST(FiberSwitch, FibersResumeWhereTheyLeftOffAndKeepTheSignalMask) {
    std::vector<uint8_t> stack(64 * 1024);
    fiber_prepare(&fiber, stack.data(), stack.size(), rounds);
    for (size_t round = 0; round < 3; ++round) {
        fiber_switch(&scheduler, &fiber);
        ASSERT_EQ(steps.size(), round + 1);
        EXPECT_EQ(steps.back(), static_cast<int>(round));
    }
    sigset_t block, old, after;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    fiber_switch(&scheduler, &fiber);
    pthread_sigmask(SIG_SETMASK, &old, &after);
    EXPECT_EQ(steps.back(), 12);
    EXPECT_EQ(sigismember(&after, SIGUSR2), 1) << "the switch back changed the mask";
    if (ZEHAL_FIBER_SWITCH_ASM) {  // swapcontext (other CPUs, AddressSanitizer) sets the mask
        EXPECT_TRUE(blocked_inside) << "the fiber ran with the mask of its preparation, not the thread's";
    }
}

}  // namespace
}  // namespace zehal::compiler
