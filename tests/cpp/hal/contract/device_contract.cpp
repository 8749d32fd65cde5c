// The device contract (cpp/hal/device.hpp, contract §1): the checks hal::Device makes once for
// every backend before any backend sees a call. Bad input is refused with its code and
// leaves the outputs alone; a lost device answers DEVICE_LOST to every checked call.
#include <unistd.h>

#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

constexpr hal::MemoryKind kKinds[] = {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared};
// A value no output of the tests below holds before a call: a call that refuses leaves it.
void* const kUntouched = reinterpret_cast<void*>(0x1234);

TEST_P(DeviceContract, AllocationFlagsAndAlignmentAreHeldToTheHalsRules) {
    void* p = kUntouched;
    for (hal::MemoryKind kind : kKinds) {
        SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind));
        EXPECT_EQ(device_->allocate(kind, 64, 0, hal::Device::kValidAllocationFlags + 1, 0, &p),
                  ZE_RESULT_ERROR_INVALID_ENUMERATION);
        EXPECT_EQ(device_->allocate(kind, 64, hal::Device::kMaxAlignment * 2, 0, 0, &p),
                  ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    }
    EXPECT_EQ(p, kUntouched);
    // Alignment 0 is the default alignment; every valid flag bit is accepted.
    Allocation m(device_, hal::MemoryKind::device, 100, 0);
    hal::PointerInfo info;
    ASSERT_EQ(device_->pointer_info(m.ptr(), &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.ptr()) % hal::Device::kDefaultAlignment, 0u);
    ASSERT_EQ(device_->allocate(hal::MemoryKind::host, 64, 0, hal::Device::kValidAllocationFlags, 0, &p),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(device_->free(p), ZE_RESULT_SUCCESS);
}

TEST_P(DeviceContract, QueuesExistOnlyOnTheDevicesEngines) {
    const hal::DeviceProperties& props = device_->properties();
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(device_->create_queue(hal::kComputeOrdinal, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->create_queue(hal::kComputeOrdinal, props.compute_engines, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->create_queue(hal::kCopyOrdinal, props.copy_engines, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->create_queue(hal::kCopyOrdinal + 1, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q, nullptr);
    for (uint32_t i = 0; i < props.compute_engines; ++i) {
        ASSERT_EQ(device_->create_queue(hal::kComputeOrdinal, i, &q), ZE_RESULT_SUCCESS);
        EXPECT_EQ(q->index(), i);
    }
}

TEST_P(DeviceContract, TimestampPoolsNeedTheDevicesTimestamps) {
    const uint32_t caps = device_->properties().timestamp_flags;
    std::shared_ptr<hal::EventPool> pool;
    const ze_result_t kernel = device_->create_event_pool(1, hal::kPoolKernelTimestamp, &pool);
    EXPECT_EQ(kernel, (caps & hal::kTimestampKernel) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    pool.reset();
    const ze_result_t mapped = device_->create_event_pool(1, hal::kPoolKernelMappedTimestamp, &pool);
    const bool synchronized = (caps & hal::kTimestampKernel) && (caps & hal::kTimestampSynchronized);
    EXPECT_EQ(mapped, synchronized ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST_P(DeviceContract, ModuleBadInputIsRefused) {
    const std::vector<uint8_t> bytes(64, 0x5a);
    hal::ModuleRef m;
    std::string log;
    EXPECT_EQ(device_->create_module(hal::ModuleFormat::spirv, bytes, "", nullptr, &log),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->create_module(static_cast<hal::ModuleFormat>(7), bytes, "", &m, &log),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(m, nullptr);
    // A null log is allowed: the reason of a refusal then goes nowhere.
    EXPECT_NE(device_->create_module(hal::ModuleFormat::spirv, bytes, "", &m, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(m, nullptr);
}

TEST_P(DeviceContract, RecordOnStreamChecksItsEventAndMark) {
    EXPECT_EQ(device_->record_on_stream(0, nullptr, hal::StreamMark::start), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    hal::DeviceRef other = other_device();
    ASSERT_NE(other, nullptr);
    EventSet theirs(other, 1);
    EXPECT_EQ(device_->record_on_stream(0, theirs.events[0], hal::StreamMark::start), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EventSet plain(device_, 1);
    EXPECT_EQ(device_->record_on_stream(0, plain.events[0], hal::StreamMark::start),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    if (!(device_->properties().timestamp_flags & hal::kTimestampKernel)) return;
    EventSet timed(device_, 1, hal::kPoolKernelTimestamp);
    EXPECT_EQ(device_->record_on_stream(0, timed.events[0], static_cast<hal::StreamMark>(2)),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(timed.events[0]->query(), ZE_RESULT_NOT_READY);
}

TEST_P(DeviceContract, MetricExportBadInputIsRefused) {
    const std::vector<hal::MetricGroupInfo>& groups = device_->metric_groups();
    int fd = -7;
    size_t size = 7;
    EXPECT_EQ(device_->export_dma_buf(0, nullptr, &size), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->export_dma_buf(0, &fd, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->export_dma_buf(static_cast<uint32_t>(groups.size()), &fd, &size),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (uint32_t g = 0; g < groups.size(); ++g) {
        if (groups[g].type_flags & hal::kGroupExportDmaBuf) {
            if (!device_->properties().dma_buf_export) {
                EXPECT_EQ(device_->export_dma_buf(g, &fd, &size), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
            }
            continue;
        }
        EXPECT_EQ(device_->export_dma_buf(g, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT) << groups[g].name;
    }
    EXPECT_EQ(fd, -7);
    EXPECT_EQ(size, 7u);
}

TEST_P(DeviceContract, ImportBadInputIsRefused) {
    // Checked before any backend looks at the fd: none is opened here.
    for (bool host : {false, true}) {
        SCOPED_TRACE(host ? "import_host_dma_buf" : "import_dma_buf");
        auto import = [&](int fd, size_t size, void** out) {
            return host ? device_->import_host_dma_buf(fd, size, out) : device_->import_dma_buf(fd, size, out);
        };
        void* p = kUntouched;
        EXPECT_EQ(import(STDIN_FILENO, 4096, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        EXPECT_EQ(import(-1, 4096, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(import(STDIN_FILENO, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(p, kUntouched);
    }
}

TEST_P(DeviceContract, AllocationExportIsCheckedLikeAllocation) {
    const uint32_t kinds = device_->exportable_kinds();
    void* p = kUntouched;
    int fd = -7;
    if (kinds == 0) {
        for (hal::MemoryKind kind : kKinds)
            EXPECT_EQ(device_->allocate_exportable(kind, 64, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        Allocation m(device_, hal::MemoryKind::device, 64);
        EXPECT_EQ(device_->export_allocation(m.ptr(), &fd), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        EXPECT_EQ(p, kUntouched);
        EXPECT_EQ(fd, -7);
        return;
    }
    const hal::DeviceProperties& props = device_->properties();
    for (hal::MemoryKind kind : kKinds) {
        SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind));
        if (!(kinds & (1u << static_cast<uint32_t>(kind)))) {
            EXPECT_EQ(device_->allocate_exportable(kind, 64, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
            continue;
        }
        EXPECT_EQ(device_->allocate_exportable(kind, 64, 0, 0, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        EXPECT_EQ(device_->allocate_exportable(kind, 0, 0, 0, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(device_->allocate_exportable(kind, 64, 3, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        EXPECT_EQ(device_->allocate_exportable(kind, 64, 0, hal::Device::kValidAllocationFlags + 1, 0, &p),
                  ZE_RESULT_ERROR_INVALID_ENUMERATION);
        EXPECT_EQ(device_->allocate_exportable(kind, 64, 0, 0, props.memory_ordinals, &p),
                  ZE_RESULT_ERROR_INVALID_ARGUMENT);
        if (kind != hal::MemoryKind::host) {
            EXPECT_EQ(device_->allocate_exportable(kind, props.max_allocation_bytes + 1, 0, 0, 0, &p),
                      ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
    }
    EXPECT_EQ(device_->allocate_exportable(static_cast<hal::MemoryKind>(7), 64, 0, 0, 0, &p),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(p, kUntouched);
    Allocation m(device_, hal::MemoryKind::device, 64);
    EXPECT_EQ(device_->export_allocation(nullptr, &fd), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->export_allocation(m.ptr(), nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->export_allocation(m.ptr(), &fd), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not for export
    EXPECT_EQ(fd, -7);
}

TEST_P(DeviceContract, PeerPropertiesNeedAnOutput) {
    EXPECT_EQ(device_->peer_properties(*device_, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    hal::PeerProperties self;
    ASSERT_EQ(device_->peer_properties(*device_, &self), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(self.access);
    EXPECT_TRUE(device_->can_access_peer(*device_));
}

TEST_P(DeviceContract, ALostDeviceAnswersDeviceLostToEveryCheckedCall) {
    if (!GetParam().can_lose) GTEST_SKIP() << "no fault injection in this backend";
    hal::DeviceRef other = other_device();
    ASSERT_NE(other, nullptr);
    Allocation kept(device_, hal::MemoryKind::device, 64);
    EventSet timed(device_, 1, hal::kPoolKernelTimestamp);
    ASSERT_EQ(device_->lose(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(device_->lost());

    void* p = kUntouched;
    int fd = -7;
    size_t size = 7;
    hal::PointerInfo info;
    hal::PeerProperties peer;
    hal::ModuleRef m;
    const std::vector<uint8_t> bytes(64, 0x5a);
    EXPECT_EQ(device_->lose(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->pointer_info(kept.ptr(), &info), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->check_operand(kept.ptr(), 64), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->create_module(hal::ModuleFormat::spirv, bytes, "", &m, nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->record_on_stream(0, timed.events[0], hal::StreamMark::start), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->export_dma_buf(0, &fd, &size), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->import_dma_buf(STDIN_FILENO, 4096, &p), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->import_host_dma_buf(STDIN_FILENO, 4096, &p), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->allocate_exportable(hal::MemoryKind::device, 64, 0, 0, 0, &p), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->export_allocation(kept.ptr(), &fd), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->peer_properties(*other, &peer), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(other->peer_properties(*device_, &peer), ZE_RESULT_ERROR_DEVICE_LOST);  // either device lost
    EXPECT_EQ(device_->free(nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(p, kUntouched);
    EXPECT_EQ(fd, -7);
    EXPECT_EQ(m, nullptr);
}

}  // namespace
}  // namespace zehal::test::contract
