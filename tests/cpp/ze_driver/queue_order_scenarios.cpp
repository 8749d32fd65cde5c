// Scenarios that hang or half-run when a command list call waits on the host for the
// device: each is one run of this program (`queue_order_scenarios <name>`), which
// queue_order_test.cpp starts in a child process with a time limit. Exit status 0: the
// scenario behaved; 1: a check failed (printed); killed: it hung.
#include <level_zero/ze_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr uint64_t kForever = UINT64_MAX;
constexpr size_t kBytes = 1 << 16;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)
#define CHECK_OK(call) CHECK((call) == ZE_RESULT_SUCCESS)

// A Level Zero program's set-up on the driver's first device: a context, host and device
// memory, events.
struct Program {
    ze_driver_handle_t driver = nullptr;
    ze_device_handle_t device = nullptr;
    ze_context_handle_t context = nullptr;
    void* host = nullptr;
    void* dev = nullptr;

    bool open() {
        if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) return false;
        uint32_t count = 1;
        if (zeDriverGet(&count, &driver) != ZE_RESULT_SUCCESS) return false;
        count = 1;
        if (zeDeviceGet(driver, &count, &device) != ZE_RESULT_SUCCESS) return false;
        ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        if (zeContextCreate(driver, &cd, &context) != ZE_RESULT_SUCCESS) return false;
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        return zeMemAllocHost(context, &hd, kBytes, 64, &host) == ZE_RESULT_SUCCESS &&
               zeMemAllocDevice(context, &dd, kBytes, 64, device, &dev) == ZE_RESULT_SUCCESS;
    }

    // `n` host-visible events of a new pool with `flags`.
    std::vector<ze_event_handle_t> events(uint32_t n, uint32_t flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE) {
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, n};
        ze_event_pool_handle_t pool = nullptr;
        std::vector<ze_event_handle_t> out(n);
        if (zeEventPoolCreate(context, &pd, 1, &device, &pool) != ZE_RESULT_SUCCESS) return {};
        for (uint32_t i = 0; i < n; ++i) {
            ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, 0, 0};
            if (zeEventCreate(pool, &ed, &out[i]) != ZE_RESULT_SUCCESS) return {};
        }
        return out;
    }

    ze_command_list_handle_t immediate() {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t l = nullptr;
        zeCommandListCreateImmediate(context, device, &qd, &l);
        return l;
    }

    ze_command_queue_handle_t queue() {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t q = nullptr;
        zeCommandQueueCreate(context, device, &qd, &q);
        return q;
    }

    ze_command_list_handle_t regular() {
        ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
        ze_command_list_handle_t l = nullptr;
        zeCommandListCreate(context, device, &ld, &l);
        return l;
    }
};

// An event is still signalled after a short wait (the command that would change it has
// not run): SUCCESS from a zero-timeout query.
bool signalled(ze_event_handle_t e) { return zeEventQueryStatus(e) == ZE_RESULT_SUCCESS; }

// Appends, behind a wait on `gate`, a reset of `victim`, a global timestamp into host
// memory and a kernel timestamp query of `timed` into host memory, on `list`.
int append_behind_gate(Program& p, ze_command_list_handle_t list, ze_event_handle_t gate, ze_event_handle_t victim,
                       ze_event_handle_t timed, ze_event_handle_t done) {
    auto* stamp = static_cast<uint64_t*>(p.host);
    auto* result = reinterpret_cast<ze_kernel_timestamp_result_t*>(static_cast<char*>(p.host) + 64);
    CHECK_OK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    CHECK_OK(zeCommandListAppendEventReset(list, victim));
    CHECK_OK(zeCommandListAppendWriteGlobalTimestamp(list, stamp, nullptr, 0, nullptr));
    CHECK_OK(zeCommandListAppendWriteGlobalTimestamp(list, static_cast<uint64_t*>(p.dev), nullptr, 0, nullptr));
    CHECK_OK(zeCommandListAppendQueryKernelTimestamps(list, 1, &timed, result, nullptr, done, 0, nullptr));
    return 0;
}

// What append_behind_gate's commands did once `done` is signalled: the reset, the
// timestamp and the kernel timestamps of `timed`.
int check_after_gate(Program& p, ze_event_handle_t victim, ze_event_handle_t timed) {
    CHECK(!signalled(victim));
    CHECK(*static_cast<uint64_t*>(p.host) != 0);
    ze_kernel_timestamp_result_t expected{};
    CHECK_OK(zeEventQueryKernelTimestamp(timed, &expected));
    CHECK(std::memcmp(static_cast<char*>(p.host) + 64, &expected, sizeof expected) == 0);
    return 0;
}

// Immediate list: the appends behind the gate return at once and run once the host
// signals the gate.
int immediate_behind_host_wait(Program& p) {
    ze_command_list_handle_t list = p.immediate();
    auto ev = p.events(3);
    auto timed = p.events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    CHECK(ev.size() == 3 && timed.size() == 1);
    ze_event_handle_t gate = ev[0], victim = ev[1], done = ev[2];
    CHECK_OK(zeCommandListAppendMemoryFill(list, p.dev, "\x5a", 1, kBytes, timed[0], 0, nullptr));
    CHECK_OK(zeEventHostSynchronize(timed[0], kForever));
    std::memset(p.host, 0, kBytes);
    CHECK_OK(zeEventHostSignal(victim));
    if (int r = append_behind_gate(p, list, gate, victim, timed[0], done)) return r;
    // Nothing behind the gate ran yet.
    CHECK(zeEventHostSynchronize(done, 1'000'000) == ZE_RESULT_NOT_READY);
    CHECK(signalled(victim));
    CHECK(*static_cast<uint64_t*>(p.host) == 0);
    CHECK_OK(zeEventHostSignal(gate));
    CHECK_OK(zeEventHostSynchronize(done, kForever));
    if (int r = check_after_gate(p, victim, timed[0])) return r;
    CHECK_OK(zeCommandListDestroy(list));
    return 0;
}

// Regular list: the execution returns at once; the fence follows the gate.
int regular_behind_host_wait(Program& p) {
    ze_command_queue_handle_t queue = p.queue();
    ze_command_list_handle_t list = p.regular();
    auto ev = p.events(3);
    auto timed = p.events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    CHECK(queue && list && ev.size() == 3 && timed.size() == 1);
    ze_event_handle_t gate = ev[0], victim = ev[1], done = ev[2];
    ze_command_list_handle_t first = p.immediate();
    CHECK_OK(zeCommandListAppendMemoryFill(first, p.dev, "\x5a", 1, kBytes, timed[0], 0, nullptr));
    CHECK_OK(zeEventHostSynchronize(timed[0], kForever));
    std::memset(p.host, 0, kBytes);
    CHECK_OK(zeEventHostSignal(victim));
    if (int r = append_behind_gate(p, list, gate, victim, timed[0], done)) return r;
    CHECK_OK(zeCommandListClose(list));
    ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ze_fence_handle_t fence = nullptr;
    CHECK_OK(zeFenceCreate(queue, &fd, &fence));
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    CHECK(zeFenceHostSynchronize(fence, 1'000'000) == ZE_RESULT_NOT_READY);
    CHECK(signalled(victim));
    CHECK(*static_cast<uint64_t*>(p.host) == 0);
    CHECK_OK(zeEventHostSignal(gate));
    CHECK_OK(zeFenceHostSynchronize(fence, kForever));
    CHECK(signalled(done));
    if (int r = check_after_gate(p, victim, timed[0])) return r;
    CHECK_OK(zeFenceDestroy(fence));
    CHECK_OK(zeCommandListDestroy(list));
    CHECK_OK(zeCommandListDestroy(first));
    CHECK_OK(zeCommandQueueDestroy(queue));
    return 0;
}

// A reset queued before a wait on the same event: the wait waits for the next signal.
int reset_then_wait_on_same_event(Program& p) {
    ze_command_list_handle_t list = p.immediate();
    auto ev = p.events(3);
    CHECK(ev.size() == 3);
    ze_event_handle_t gate = ev[0], event = ev[1], done = ev[2];
    CHECK_OK(zeEventHostSignal(event));
    CHECK_OK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    CHECK_OK(zeCommandListAppendEventReset(list, event));
    CHECK_OK(zeCommandListAppendBarrier(list, done, 1, &event));
    CHECK_OK(zeEventHostSignal(gate));
    CHECK(zeEventHostSynchronize(done, 10'000'000) == ZE_RESULT_NOT_READY);
    CHECK_OK(zeEventHostSignal(event));
    CHECK_OK(zeEventHostSynchronize(done, kForever));
    CHECK_OK(zeCommandListDestroy(list));
    return 0;
}

// Destroying an immediate list, resetting it, and destroying a queue, each with a command
// that waits for an event the host signals only afterwards: the calls return, and what was
// submitted still runs.
int destroy_with_pending_wait(Program& p) {
    auto ev = p.events(4);
    CHECK(ev.size() == 4);
    ze_event_handle_t gate = ev[0], from_list = ev[1], from_queue = ev[2], from_reset = ev[3];
    std::memset(p.host, 0, kBytes);
    auto* bytes = static_cast<uint8_t*>(p.host);

    ze_command_list_handle_t reset = p.immediate();
    CHECK_OK(zeCommandListAppendMemoryFill(reset, bytes, "\x01", 1, 64, from_reset, 1, &gate));
    CHECK_OK(zeCommandListReset(reset));

    ze_command_list_handle_t list = p.immediate();
    CHECK_OK(zeCommandListAppendMemoryFill(list, bytes + 64, "\x02", 1, 64, from_list, 1, &gate));
    CHECK_OK(zeCommandListDestroy(list));

    ze_command_queue_handle_t queue = p.queue();
    ze_command_list_handle_t regular = p.regular();
    CHECK(queue && regular);
    CHECK_OK(zeCommandListAppendMemoryFill(regular, bytes + 128, "\x03", 1, 64, from_queue, 1, &gate));
    CHECK_OK(zeCommandListClose(regular));
    CHECK_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    CHECK_OK(zeCommandQueueDestroy(queue));
    CHECK_OK(zeCommandListDestroy(regular));

    CHECK(!signalled(from_list) && !signalled(from_queue) && !signalled(from_reset));
    CHECK_OK(zeEventHostSignal(gate));
    for (ze_event_handle_t e : {from_reset, from_list, from_queue}) CHECK_OK(zeEventHostSynchronize(e, kForever));
    CHECK(bytes[0] == 1 && bytes[64] == 2 && bytes[128] == 3);
    CHECK_OK(zeCommandListDestroy(reset));
    return 0;
}

// A deferred free (zeMemFreeExt, DEFER_FREE) of memory that a copy behind a wait on a
// host-signalled event still reads: the free returns at once, the copy reads the memory as
// it was, and the memory is freed once the copy is over.
int deferred_free_behind_host_wait(Program& p) {
    auto ev = p.events(2);
    CHECK(ev.size() == 2);
    ze_event_handle_t gate = ev[0], done = ev[1];
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    void* mem = nullptr;
    CHECK_OK(zeMemAllocDevice(p.context, &dd, kBytes, 64, p.device, &mem));
    ze_command_list_handle_t list = p.immediate();
    CHECK(list);
    std::memset(p.host, 0, kBytes);
    CHECK_OK(zeCommandListAppendMemoryFill(list, mem, "\x5c", 1, kBytes, nullptr, 0, nullptr));
    CHECK_OK(zeCommandListAppendMemoryCopy(list, p.host, mem, kBytes, done, 1, &gate));
    ze_memory_free_ext_desc_t defer{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr,
                                    ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE};
    CHECK_OK(zeMemFreeExt(p.context, &defer, mem));
    CHECK(!signalled(done));
    CHECK_OK(zeEventHostSignal(gate));
    CHECK_OK(zeEventHostSynchronize(done, kForever));
    const auto* bytes = static_cast<const uint8_t*>(p.host);
    for (size_t i = 0; i < kBytes; ++i) CHECK(bytes[i] == 0x5c);
    // Freed after the copy: the address becomes no allocation (a free that never comes
    // hangs here, and the time limit fails the scenario).
    ze_memory_allocation_properties_t ap{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr, ZE_MEMORY_TYPE_DEVICE,
                                         0, 0};
    while (ap.type != ZE_MEMORY_TYPE_UNKNOWN) {
        std::this_thread::yield();
        CHECK_OK(zeMemGetAllocProperties(p.context, mem, &ap, nullptr));
    }
    CHECK_OK(zeCommandListDestroy(list));
    return 0;
}

const std::map<std::string, std::function<int(Program&)>>& scenarios() {
    static const std::map<std::string, std::function<int(Program&)>> all{
        {"immediate_behind_host_wait", immediate_behind_host_wait},
        {"regular_behind_host_wait", regular_behind_host_wait},
        {"reset_then_wait_on_same_event", reset_then_wait_on_same_event},
        {"destroy_with_pending_wait", destroy_with_pending_wait},
        {"deferred_free_behind_host_wait", deferred_free_behind_host_wait},
    };
    return all;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 || !scenarios().count(argv[1])) {
        std::fprintf(stderr, "usage: %s <scenario>\n", argv[0]);
        return 2;
    }
    Program p;
    if (!p.open()) {
        std::fprintf(stderr, "set-up through the loader failed\n");
        return 1;
    }
    return scenarios().at(argv[1])(p);
}
