// Bad input to the driver (SEMANTICS §9): null and destroyed handles, null pointers, zero
// and oversized sizes, bad alignment, wrong states, foreign pointers, double
// frees, and functions zehal does not implement. Each is a clear code, never a crash.
#include <cstring>

#include <level_zero/zes_api.h>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

using BadInputTest = ZeDriver;

TEST_F(BadInputTest, NullHandlesAndPointers) {
    uint32_t n = 0;
    EXPECT_EQ(zeDeviceGet(nullptr, &n, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeDeviceGet(driver, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeDeviceGetProperties(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeDeviceGetProperties(device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeDriverGetApiVersion(driver, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeContextCreate(driver, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(nullptr, dev, host, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, nullptr, host, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, dev, host, 64, nullptr, 2, nullptr), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zeEventHostSignal(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeFenceHostSynchronize(nullptr, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemFree(context, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeMemFree(nullptr, host), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetMetricGroupGet(nullptr, &n, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetMetricGroupGetProperties(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A value that is no handle of the driver's.
    auto bogus = reinterpret_cast<ze_device_handle_t>(uintptr_t{0x1234});
    EXPECT_EQ(zeDeviceGetStatus(bogus), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(BadInputTest, DestroyedHandlesAreRefused) {
    auto ev = make_events(1);
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool = nullptr;
    ZE_OK(zeEventPoolCreate(context, &pd, 0, nullptr, &pool));
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
    ze_event_handle_t e = nullptr;
    ZE_OK(zeEventCreate(pool, &ed, &e));
    ZE_OK(zeEventDestroy(e));
    EXPECT_EQ(zeEventDestroy(e), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventHostSignal(e), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, dev, host, 64, e, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeEventPoolDestroy(pool));
    EXPECT_EQ(zeEventPoolDestroy(pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventCreate(pool, &ed, &e), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    ze_command_list_handle_t l = immediate_list(0);
    ZE_OK(zeCommandListDestroy(l));
    EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendBarrier(l, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t c = nullptr;
    ZE_OK(zeContextCreate(driver, &cd, &c));
    ZE_OK(zeContextDestroy(c));
    EXPECT_EQ(zeContextDestroy(c), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* p = nullptr;
    EXPECT_EQ(zeMemAllocHost(c, &hd, 64, 0, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(BadInputTest, AllocationArguments) {
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* p = nullptr;
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 0, 0, device, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 64, 3, device, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(zeMemAllocDevice(context, &dd, size_t{1} << 62, 0, device, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 64, 0, nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemAllocDevice(context, nullptr, 64, 0, device, &p), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 64, 0, device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeMemAllocHost(context, &hd, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    dd.ordinal = 99;
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 64, 0, device, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // An import of something that is no dma-buf.
    ze_external_memory_import_fd_t import{ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, nullptr,
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, -1};
    dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &import, 0, 0};
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 4096, 4096, device, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    import.fd = 0;  // stdin
    EXPECT_NE(zeMemAllocDevice(context, &dd, 4096, 4096, device, &p), ZE_RESULT_SUCCESS);
    import.flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD;
    EXPECT_EQ(zeMemAllocDevice(context, &dd, 4096, 4096, device, &p), ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
}

TEST_F(BadInputTest, FreeingWhatIsNotAnAllocation) {
    int local = 0;
    EXPECT_EQ(zeMemFree(context, &local), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeMemFree(context, static_cast<char*>(dev) + 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // interior
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* p = nullptr;
    ZE_OK(zeMemAllocHost(context, &hd, 64, 0, &p));
    ZE_OK(zeMemFree(context, p));
    EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // twice
    void* base = nullptr;
    EXPECT_EQ(zeMemGetAddressRange(context, &local, &base, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST_F(BadInputTest, CommandArguments) {
    // Copies the HAL refuses: past the end, overlapping, pages not mapped.
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, dev, host, kBytes + 1, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, host, static_cast<char*>(host) + 8, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    const auto* unmapped = reinterpret_cast<const void*>(uintptr_t{4096});
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, dev, unmapped, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint8_t pattern[3] = {1, 2, 3};
    EXPECT_EQ(zeCommandListAppendMemoryFill(list, dev, pattern, 3, 96, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zeCommandListAppendMemoryFill(list, dev, pattern, 0, 96, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    auto* odd = reinterpret_cast<uint64_t*>(static_cast<char*>(host) + 3);
    EXPECT_EQ(zeCommandListAppendWriteGlobalTimestamp(list, odd, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeCommandListAppendQueryKernelTimestamps(list, 0, nullptr, host, nullptr, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // Queues and lists with bad descriptors.
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 7, 0, 0, ZE_COMMAND_QUEUE_MODE_DEFAULT,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l = nullptr;
    EXPECT_EQ(zeCommandListCreateImmediate(context, device, &qd, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 9, 0};
    EXPECT_EQ(zeCommandListCreate(context, device, &ld, &l), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Event pools and events.
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 0};
    ze_event_pool_handle_t pool = nullptr;
    EXPECT_EQ(zeEventPoolCreate(context, &pd, 1, &device, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    auto ev = make_events(1);
    ze_kernel_timestamp_result_t ts{};
    EXPECT_EQ(zeEventQueryKernelTimestamp(ev[0], &ts), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);  // no timestamp flag
    EXPECT_EQ(zeEventHostSynchronize(ev[0], 0), ZE_RESULT_NOT_READY);
    // Modules: a descriptor without input, a null descriptor or output.
    ze_module_desc_t md{};
    md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    ze_module_handle_t module = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &module, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeModuleCreate(context, device, nullptr, &module, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(module, nullptr);
}

TEST_F(BadInputTest, UnimplementedFunctionsAreUnsupported) {
    ze_image_desc_t id{};
    ze_image_handle_t image = nullptr;
    EXPECT_EQ(zeImageCreate(context, device, &id, &image), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    uint32_t count = 0;
    EXPECT_EQ(zesDeviceEnumPowerDomains(reinterpret_cast<zes_device_handle_t>(device), &count, nullptr),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST_F(BadInputTest, TracerRules) {
    auto create = extension<decltype(&zetMetricTracerCreateExp)>(driver, "zetMetricTracerCreateExp");
    auto destroy = extension<decltype(&zetMetricTracerDestroyExp)>(driver, "zetMetricTracerDestroyExp");
    auto enable = extension<decltype(&zetMetricTracerEnableExp)>(driver, "zetMetricTracerEnableExp");
    auto disable = extension<decltype(&zetMetricTracerDisableExp)>(driver, "zetMetricTracerDisableExp");
    auto read = extension<decltype(&zetMetricTracerReadDataExp)>(driver, "zetMetricTracerReadDataExp");
    ASSERT_TRUE(create && destroy && enable && disable && read);
    uint32_t n = 1;
    zet_metric_group_handle_t group = nullptr;
    ZE_OK(zetMetricGroupGet(device, &n, &group));
    zet_metric_tracer_exp_desc_t desc{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_TRACER_EXP_DESC), nullptr,
                                      0};
    zet_metric_tracer_exp_handle_t tracer = nullptr;
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, nullptr));
    EXPECT_EQ(create(context, device, 1, &group, &desc, nullptr, &tracer), ZE_RESULT_NOT_READY);  // not activated
    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &group));
    EXPECT_EQ(create(context, device, 1, nullptr, &desc, nullptr, &tracer), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(create(context, device, 0, &group, &desc, nullptr, &tracer), ZE_RESULT_ERROR_INVALID_SIZE);
    auto not_host_visible = make_events(1, 0);
    EXPECT_EQ(create(context, device, 1, &group, &desc, not_host_visible[0], &tracer),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(create(context, device, 1, &group, &desc, nullptr, &tracer));
    EXPECT_GT(desc.notifyEveryNBytes, 0u);  // 0 became the default
    zet_metric_tracer_exp_handle_t second = nullptr;
    EXPECT_EQ(create(context, device, 1, &group, &desc, nullptr, &second), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    size_t size = 0;
    EXPECT_EQ(read(tracer, &size, nullptr), ZE_RESULT_NOT_READY);  // never enabled
    ZE_OK(enable(tracer, 1));
    EXPECT_EQ(destroy(tracer), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ZE_OK(disable(tracer, 1));
    size = 16;
    EXPECT_EQ(read(tracer, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(destroy(tracer));
    EXPECT_EQ(destroy(tracer), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(enable(tracer, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, nullptr));
}

TEST_F(BadInputTest, DecoderRules) {
    auto create = extension<decltype(&zetMetricTracerCreateExp)>(driver, "zetMetricTracerCreateExp");
    auto destroy = extension<decltype(&zetMetricTracerDestroyExp)>(driver, "zetMetricTracerDestroyExp");
    auto dcreate = extension<decltype(&zetMetricDecoderCreateExp)>(driver, "zetMetricDecoderCreateExp");
    auto ddestroy = extension<decltype(&zetMetricDecoderDestroyExp)>(driver, "zetMetricDecoderDestroyExp");
    auto decodable = extension<decltype(&zetMetricDecoderGetDecodableMetricsExp)>(
        driver, "zetMetricDecoderGetDecodableMetricsExp");
    auto decode = extension<decltype(&zetMetricTracerDecodeExp)>(driver, "zetMetricTracerDecodeExp");
    uint32_t n = 1;
    zet_metric_group_handle_t group = nullptr;
    ZE_OK(zetMetricGroupGet(device, &n, &group));
    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &group));
    zet_metric_tracer_exp_desc_t desc{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_TRACER_EXP_DESC), nullptr,
                                      0};
    zet_metric_tracer_exp_handle_t tracer = nullptr;
    ZE_OK(create(context, device, 1, &group, &desc, nullptr, &tracer));
    zet_metric_decoder_exp_handle_t decoder = nullptr;
    EXPECT_EQ(dcreate(tracer, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(dcreate(tracer, &decoder));
    ZE_OK(destroy(tracer));  // the decoder outlives its tracer
    uint32_t count = 0;
    ZE_OK(decodable(decoder, &count, nullptr));
    ASSERT_GT(count, 0u);
    std::vector<zet_metric_handle_t> metrics(count + 2, nullptr);
    uint32_t more = count + 2;
    ZE_OK(decodable(decoder, &more, metrics.data()));
    EXPECT_EQ(more, count);
    EXPECT_EQ(metrics[count], nullptr);  // extra slots untouched
    // Truncated raw data: INVALID_ARGUMENT, no crash.
    uint8_t raw[40] = {1, 0, 32, 0};
    size_t size = sizeof raw;
    uint32_t sets = 0, entries = 0;
    EXPECT_EQ(decode(decoder, &size, raw, 0, nullptr, &sets, nullptr, &entries, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto foreign = reinterpret_cast<zet_metric_handle_t>(raw);  // no metric handle
    size = sizeof raw;
    EXPECT_EQ(decode(decoder, &size, raw, 1, &foreign, &sets, nullptr, &entries, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(ddestroy(decoder));
    EXPECT_EQ(ddestroy(decoder), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(decodable(decoder, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, nullptr));
}

}  // namespace
}  // namespace zetest
