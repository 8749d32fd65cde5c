// Memory hints: prefetch and memory advice in command lists, residency of a context's memory.
// They are hints for performance, never needed for correctness: zehal's shared and host
// allocations are reachable from every device of the driver where they lie and never
// migrate, and every allocation stays resident, so each is checked and then changes nothing.
#include "command_list.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// The last advice of the API the driver reports (1.10):
// ZE_MEMORY_ADVICE_CLEAR_SYSTEM_MEMORY_PREFERRED_LOCATION.
constexpr uint32_t kLastAdvice = 9;

// Runs `f` on the command list of `hCommandList`.
template <typename F>
ze_result_t with_list(ze_command_list_handle_t hCommandList, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        return f(*list);
    });
}

// Moves nothing. It is appended as an empty barrier, so it obeys the list's rules (a closed
// regular list refuses it) and keeps its place in the list's order.
ze_result_t zeCommandListAppendMemoryPrefetch_(ze_command_list_handle_t hCommandList, const void* ptr, size_t size) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        (void)size;  // any range: nothing is moved
        return l.append(Command{});
    });
}

// Advice for `hDevice` about a range: checked (a device of the driver, a pointer, an advice
// the API defines) and recorded nowhere, as placement never changes.
ze_result_t zeCommandListAppendMemAdvise_(ze_command_list_handle_t hCommandList, ze_device_handle_t hDevice,
                                          const void* ptr, size_t size, ze_memory_advice_t advice) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (static_cast<uint32_t>(advice) > kLastAdvice) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        (void)size;
        return l.append(Command{});
    });
}

// Residency of a range for `hDevice`: checked (a live context, a device of the driver, a
// pointer) and changes nothing, as every allocation of a zehal device stays resident from its
// allocation to its free (nothing is paged out or evicted).
ze_result_t residency(ze_context_handle_t hContext, ze_device_handle_t hDevice, const void* ptr) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        return ptr ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    });
}

ze_result_t zeContextMakeMemoryResident_(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr,
                                         size_t /*size: any range is resident already*/) {
    return residency(hContext, hDevice, ptr);
}

ze_result_t zeContextEvictMemory_(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr,
                                  size_t /*size: nothing is evicted*/) {
    return residency(hContext, hDevice, ptr);
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandListAppendMemoryPrefetch, zeCommandListAppendMemoryPrefetch_),
    ZEHAL_ENTRY(zeCommandListAppendMemAdvise, zeCommandListAppendMemAdvise_),
    ZEHAL_ENTRY(zeContextMakeMemoryResident, zeContextMakeMemoryResident_),
    ZEHAL_ENTRY(zeContextEvictMemory, zeContextEvictMemory_),
};

}  // namespace

std::span<const Entry> memory_hints_entries() { return kEntries; }

}  // namespace zehal::ze_driver
