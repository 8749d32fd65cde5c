// A global operator new that can be told to fail: the C boundary tests make every
// allocation inside a C API call fail in turn and check that the call answers
// out-of-memory instead of letting std::bad_alloc escape.
#pragma once

#include <cstddef>

namespace zehal::test {

// From now on, the allocation numbered `n` (0: the next one) on this thread throws
// std::bad_alloc; -1 disarms. Returns whether the armed failure was not reached yet.
void fail_allocation(long n);
// Whether the armed failure is still pending (the call made fewer allocations).
bool failure_pending();

}  // namespace zehal::test
