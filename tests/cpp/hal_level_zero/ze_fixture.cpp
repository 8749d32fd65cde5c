#include "ze_fixture.hpp"

#include <cstdlib>
#include <cstring>

namespace zehal::test {

bool level_zero_required() {
    const char* v = std::getenv("ZEHAL_REQUIRE_LEVEL_ZERO");
    return v && *v && std::strcmp(v, "0") != 0;
}

bool level_zero_device(hal::DeviceRef* device, std::string* why) {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != "level_zero") continue;
        if (!b.available) {
            *why = "level_zero backend unavailable: " + b.reason;
            return false;
        }
        if (b.backend->devices().empty()) {
            *why = "level_zero backend has no device";
            return false;
        }
        *device = b.backend->devices().front();
        return true;
    }
    *why = "no level_zero backend in the registry";
    return false;
}

hal::DeviceRef driver_twin() {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name == "level_zero" || !b.available || b.backend->devices().empty()) continue;
        return b.backend->devices().front();
    }
    return nullptr;
}

Memory::Memory(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size, size_t alignment) : device(d) {
    EXPECT_EQ(device->allocate(kind, size, alignment, 0, 0, &ptr), ZE_RESULT_SUCCESS);
}

Memory::~Memory() {
    if (ptr) {
        EXPECT_EQ(device->free(ptr), ZE_RESULT_SUCCESS);
    }
}

Events::Events(const hal::DeviceRef& d, uint32_t count, uint32_t flags) {
    EXPECT_EQ(d->create_event_pool(count, flags, &pool), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; pool && i < count; ++i) {
        hal::EventRef e;
        EXPECT_EQ(pool->event(i, &e), ZE_RESULT_SUCCESS);
        events.push_back(e);
    }
}

void copy_and_wait(hal::Queue& queue, void* dst, const void* src, size_t size) {
    ASSERT_EQ(queue.append_copy(dst, src, size, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(queue.host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

std::vector<uint8_t> read_back(const hal::DeviceRef& device, hal::Queue& queue, const void* src, size_t size) {
    Memory host(device, hal::MemoryKind::host, size);
    std::vector<uint8_t> out(size);
    if (!host.ptr) return out;
    copy_and_wait(queue, host.ptr, src, size);
    std::memcpy(out.data(), host.ptr, size);
    return out;
}

}  // namespace zehal::test
