// The driver's dispatch tables, asked for directly as a loader asks (dlopen of
// libze_zehal.so, ZEHAL_ZE_DRIVER names it): every table of the API 1.4 headers is filled
// exactly (no member missing, none past its end), older versions get fewer members, newer
// ones more, and nothing beyond the version asked is written.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

namespace {

using Getter = ze_result_t (*)(ze_api_version_t, void*);

constexpr ze_api_version_t version(uint32_t major, uint32_t minor) {
    return static_cast<ze_api_version_t>(ZE_MAKE_VERSION(major, minor));
}

class DispatchTables : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("ZEHAL_ZE_DRIVER");
        ASSERT_NE(path, nullptr) << "ZEHAL_ZE_DRIVER names libze_zehal.so";
        // Kept loaded, as a loader keeps its drivers (unloading would also strand what the
        // sanitizers' runtime recorded of the library).
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        ASSERT_NE(lib, nullptr) << dlerror();
    }
    Getter getter(const char* name) { return reinterpret_cast<Getter>(dlsym(lib, name)); }

    // How many leading slots of a guard-filled table of `capacity` the getter wrote for
    // `version`; the slots after them must be untouched.
    size_t written(const char* name, ze_api_version_t version, size_t capacity = 128) {
        Getter g = getter(name);
        EXPECT_NE(g, nullptr) << name;
        if (!g) return 0;
        void* const guard = reinterpret_cast<void*>(uintptr_t{0x5a5a5a5a});
        std::vector<void*> table(capacity, guard);
        EXPECT_EQ(g(version, table.data()), ZE_RESULT_SUCCESS) << name;
        size_t n = 0;
        while (n < capacity && table[n] != guard) ++n;
        for (size_t i = n; i < capacity; ++i) EXPECT_EQ(table[i], guard) << name << " wrote slot " << i;
        for (size_t i = 0; i < n; ++i) EXPECT_NE(table[i], nullptr) << name << " left slot " << i << " null";
        return n;
    }

    void* lib = nullptr;
};

#define TABLE_OF_1_4(getter, type) \
    EXPECT_EQ(written(#getter, ZE_API_VERSION_1_4), sizeof(type) / sizeof(void*)) << #getter

TEST_F(DispatchTables, EveryTableOfTheApi14HeadersIsFilledExactly) {
    TABLE_OF_1_4(zeGetGlobalProcAddrTable, ze_global_dditable_t);
    TABLE_OF_1_4(zeGetDriverProcAddrTable, ze_driver_dditable_t);
    TABLE_OF_1_4(zeGetDeviceProcAddrTable, ze_device_dditable_t);
    TABLE_OF_1_4(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t);
    TABLE_OF_1_4(zeGetContextProcAddrTable, ze_context_dditable_t);
    TABLE_OF_1_4(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t);
    TABLE_OF_1_4(zeGetCommandListProcAddrTable, ze_command_list_dditable_t);
    TABLE_OF_1_4(zeGetEventProcAddrTable, ze_event_dditable_t);
    TABLE_OF_1_4(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t);
    TABLE_OF_1_4(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t);
    TABLE_OF_1_4(zeGetFenceProcAddrTable, ze_fence_dditable_t);
    TABLE_OF_1_4(zeGetImageProcAddrTable, ze_image_dditable_t);
    TABLE_OF_1_4(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t);
    TABLE_OF_1_4(zeGetKernelProcAddrTable, ze_kernel_dditable_t);
    TABLE_OF_1_4(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t);
    TABLE_OF_1_4(zeGetMemProcAddrTable, ze_mem_dditable_t);
    TABLE_OF_1_4(zeGetModuleProcAddrTable, ze_module_dditable_t);
    TABLE_OF_1_4(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t);
    TABLE_OF_1_4(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t);
    TABLE_OF_1_4(zeGetSamplerProcAddrTable, ze_sampler_dditable_t);
    TABLE_OF_1_4(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t);
    TABLE_OF_1_4(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t);
    TABLE_OF_1_4(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t);
    TABLE_OF_1_4(zetGetDeviceProcAddrTable, zet_device_dditable_t);
    TABLE_OF_1_4(zetGetContextProcAddrTable, zet_context_dditable_t);
    TABLE_OF_1_4(zetGetCommandListProcAddrTable, zet_command_list_dditable_t);
    TABLE_OF_1_4(zetGetKernelProcAddrTable, zet_kernel_dditable_t);
    TABLE_OF_1_4(zetGetModuleProcAddrTable, zet_module_dditable_t);
    TABLE_OF_1_4(zetGetDebugProcAddrTable, zet_debug_dditable_t);
    TABLE_OF_1_4(zetGetMetricProcAddrTable, zet_metric_dditable_t);
    TABLE_OF_1_4(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t);
    TABLE_OF_1_4(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t);
    TABLE_OF_1_4(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t);
    TABLE_OF_1_4(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t);
    TABLE_OF_1_4(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t);
    TABLE_OF_1_4(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t);
    TABLE_OF_1_4(zesGetDeviceProcAddrTable, zes_device_dditable_t);
    TABLE_OF_1_4(zesGetDriverProcAddrTable, zes_driver_dditable_t);
    TABLE_OF_1_4(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t);
    TABLE_OF_1_4(zesGetEngineProcAddrTable, zes_engine_dditable_t);
    TABLE_OF_1_4(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t);
    TABLE_OF_1_4(zesGetFanProcAddrTable, zes_fan_dditable_t);
    TABLE_OF_1_4(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t);
    TABLE_OF_1_4(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t);
    TABLE_OF_1_4(zesGetLedProcAddrTable, zes_led_dditable_t);
    TABLE_OF_1_4(zesGetMemoryProcAddrTable, zes_memory_dditable_t);
    TABLE_OF_1_4(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t);
    TABLE_OF_1_4(zesGetPowerProcAddrTable, zes_power_dditable_t);
    TABLE_OF_1_4(zesGetPsuProcAddrTable, zes_psu_dditable_t);
    TABLE_OF_1_4(zesGetRasProcAddrTable, zes_ras_dditable_t);
    TABLE_OF_1_4(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t);
    TABLE_OF_1_4(zesGetStandbyProcAddrTable, zes_standby_dditable_t);
    TABLE_OF_1_4(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t);
}

TEST_F(DispatchTables, OnlyTheMembersOfTheVersionAskedAreWritten) {
    // The driver table: five members in 1.0, GetExtensionFunctionAddress in 1.1,
    // GetLastErrorDescription in 1.6.
    EXPECT_EQ(written("zeGetDriverProcAddrTable", ZE_API_VERSION_1_0), 5u);
    EXPECT_EQ(written("zeGetDriverProcAddrTable", ZE_API_VERSION_1_1), 6u);
    EXPECT_EQ(written("zeGetDriverProcAddrTable", version(1, 6)), 7u);
    // A 1.10 loader asks the metric tracer and decoder tables, which 1.4 lacks.
    EXPECT_EQ(written("zetGetMetricTracerExpProcAddrTable", ZE_API_VERSION_1_4), 0u);
    EXPECT_EQ(written("zetGetMetricTracerExpProcAddrTable", version(1, 10)), 6u);
    EXPECT_EQ(written("zetGetMetricDecoderExpProcAddrTable", version(1, 10)), 3u);
    // The event table grows: zeEventQueryKernelTimestampsExt is its eighth member (1.6).
    EXPECT_EQ(written("zeGetEventProcAddrTable", version(1, 6)), 8u);
    EXPECT_GT(written("zeGetCommandListProcAddrTable", version(1, 17)),
              written("zeGetCommandListProcAddrTable", ZE_API_VERSION_1_4));
}

TEST_F(DispatchTables, BadArguments) {
    Getter g = getter("zeGetDriverProcAddrTable");
    ASSERT_NE(g, nullptr);
    std::vector<void*> table(16);
    EXPECT_EQ(g(ZE_API_VERSION_1_4, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(g(version(2, 0), table.data()), ZE_RESULT_ERROR_UNSUPPORTED_VERSION);
    // Unimplemented members answer UNSUPPORTED_FEATURE: zeDriverRTASFormatCompatibilityCheckExt.
    ASSERT_EQ(g(version(1, 13), table.data()), ZE_RESULT_SUCCESS);
    auto rtas_check = reinterpret_cast<ze_result_t (*)(ze_driver_handle_t, uint32_t, uint32_t)>(table[7]);
    EXPECT_EQ(rtas_check(nullptr, 0, 0), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    // zeInitDrivers (1.10), what newer loaders call: GPU drivers only.
    Getter global = getter("zeGetGlobalProcAddrTable");
    ASSERT_EQ(global(version(1, 10), table.data()), ZE_RESULT_SUCCESS);
    struct InitDesc {
        uint32_t stype;
        const void* next;
        uint32_t flags;
    };
    auto init_drivers = reinterpret_cast<ze_result_t (*)(uint32_t*, ze_driver_handle_t*, InitDesc*)>(table[1]);
    InitDesc npu{0x00020021, nullptr, 1u << 1};
    uint32_t count = 0;
    EXPECT_EQ(init_drivers(&count, nullptr, &npu), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 0u);
    InitDesc gpu{0x00020021, nullptr, 1u << 0};
    ze_driver_handle_t drv = nullptr;
    EXPECT_EQ(init_drivers(&count, nullptr, &gpu), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(init_drivers(&count, &drv, &gpu), ZE_RESULT_SUCCESS);
    EXPECT_NE(drv, nullptr);
    EXPECT_EQ(init_drivers(&count, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // Only the getters leave the library.
    EXPECT_EQ(dlsym(lib, "zehal_ze_unsupported"), nullptr);
    EXPECT_EQ(dlsym(lib, "zehal_version"), nullptr);
}

}  // namespace
