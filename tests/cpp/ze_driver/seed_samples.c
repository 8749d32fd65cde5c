/* The seeds' sample code, as the Level Zero specification writes it, run through the real
 * loader against zehal's driver (ZE_ENABLE_ALT_DRIVERS): the metric tracer's
 * create/enable/read/decode loop, the kernel timestamps query with and without mapped
 * timestamps, and metric export memory imported through zeMemAllocDevice. Each is walked
 * with copies and fills, and, on a device that builds SPIR-V, again with a kernel
 * (tests/kernels/buffers.cl's fill_uint) doing the work. C11, linked with
 * libze_loader.so.1 only; the experimental functions are resolved with
 * zeDriverGetExtensionFunctionAddress, which every loader supports. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include "spec_ext.h"

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)
#define ZE_OK(call) CHECK((call) == ZE_RESULT_SUCCESS)

static uint64_t host_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The experimental entry points, from the driver. */
static struct {
    ze_result_t (*query_timestamps)(ze_event_handle_t, ze_device_handle_t, uint32_t*,
                                    ze_event_query_kernel_timestamps_results_ext_properties_t*);
    ze_result_t (*tracer_create)(zet_context_handle_t, zet_device_handle_t, uint32_t, zet_metric_group_handle_t*,
                                 zet_metric_tracer_exp_desc_t*, ze_event_handle_t, zet_metric_tracer_exp_handle_t*);
    ze_result_t (*tracer_destroy)(zet_metric_tracer_exp_handle_t);
    ze_result_t (*tracer_enable)(zet_metric_tracer_exp_handle_t, ze_bool_t);
    ze_result_t (*tracer_disable)(zet_metric_tracer_exp_handle_t, ze_bool_t);
    ze_result_t (*tracer_read)(zet_metric_tracer_exp_handle_t, size_t*, uint8_t*);
    ze_result_t (*decoder_create)(zet_metric_tracer_exp_handle_t, zet_metric_decoder_exp_handle_t*);
    ze_result_t (*decoder_destroy)(zet_metric_decoder_exp_handle_t);
    ze_result_t (*decodable)(zet_metric_decoder_exp_handle_t, uint32_t*, zet_metric_handle_t*);
    ze_result_t (*decode)(zet_metric_decoder_exp_handle_t, size_t*, uint8_t*, uint32_t, zet_metric_handle_t*, uint32_t*,
                          uint32_t*, uint32_t*, zet_metric_entry_exp_t*);
} ext;

static void* resolve(ze_driver_handle_t driver, const char* name) {
    void* f = NULL;
    ZE_OK(zeDriverGetExtensionFunctionAddress(driver, name, &f));
    CHECK(f != NULL);
    return f;
}

static void resolve_all(ze_driver_handle_t d) {
    *(void**)&ext.query_timestamps = resolve(d, "zeEventQueryKernelTimestampsExt");
    *(void**)&ext.tracer_create = resolve(d, "zetMetricTracerCreateExp");
    *(void**)&ext.tracer_destroy = resolve(d, "zetMetricTracerDestroyExp");
    *(void**)&ext.tracer_enable = resolve(d, "zetMetricTracerEnableExp");
    *(void**)&ext.tracer_disable = resolve(d, "zetMetricTracerDisableExp");
    *(void**)&ext.tracer_read = resolve(d, "zetMetricTracerReadDataExp");
    *(void**)&ext.decoder_create = resolve(d, "zetMetricDecoderCreateExp");
    *(void**)&ext.decoder_destroy = resolve(d, "zetMetricDecoderDestroyExp");
    *(void**)&ext.decodable = resolve(d, "zetMetricDecoderGetDecodableMetricsExp");
    *(void**)&ext.decode = resolve(d, "zetMetricTracerDecodeExp");
}

static int has_extension(ze_driver_handle_t driver, const char* name) {
    uint32_t count = 0;
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, NULL));
    ze_driver_extension_properties_t* props = calloc(count, sizeof *props);
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, props));
    int found = 0;
    for (uint32_t i = 0; i < count; ++i) found |= strcmp(props[i].name, name) == 0;
    free(props);
    return found;
}

/* The kernel of the samples' second walk: fill_uint(dst, value), one work-item per word;
 * null on a device that builds no SPIR-V (then only the first walk runs). */
static ze_kernel_handle_t fill_kernel;

static void load_fill_kernel(ze_context_handle_t context, ze_device_handle_t device, ze_module_handle_t* module) {
    ze_device_module_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
    ZE_OK(zeDeviceGetModuleProperties(device, &props));
    fill_kernel = NULL;
    *module = NULL;
    if (props.spirvVersionSupported == 0) return;
    FILE* f = fopen(ZEHAL_SPIRV_KERNEL_DIR "/buffers.spv", "rb");
    CHECK(f != NULL);
    uint8_t* spirv = malloc(1 << 16);
    const size_t size = fread(spirv, 1, 1 << 16, f);
    fclose(f);
    CHECK(size > 0 && size < (1 << 16));
    ze_module_desc_t desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, spirv, "", NULL};
    ZE_OK(zeModuleCreate(context, device, &desc, module, NULL));
    free(spirv);
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "fill_uint"};
    ZE_OK(zeKernelCreate(*module, &kernel_desc, &fill_kernel));
    ZE_OK(zeKernelSetGroupSize(fill_kernel, 1, 1, 1));
}

/* The work of a sample: `bytes` (a multiple of 4) at dst set to the 32-bit `value` by a fill
 * (use_kernel 0) or by fill_kernel (use_kernel 1), signalling `event`. */
static void fill_words(ze_command_list_handle_t list, int use_kernel, void* dst, uint32_t value, size_t bytes,
                       ze_event_handle_t event) {
    if (!use_kernel) {
        ZE_OK(zeCommandListAppendMemoryFill(list, dst, &value, sizeof value, bytes, event, 0, NULL));
        return;
    }
    ZE_OK(zeKernelSetArgumentValue(fill_kernel, 0, sizeof dst, &dst));
    ZE_OK(zeKernelSetArgumentValue(fill_kernel, 1, sizeof value, &value));
    const ze_group_count_t groups = {(uint32_t)(bytes / sizeof value), 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, fill_kernel, &groups, event, 0, NULL));
}

/* Waits for every command of immediate list `list` (a barrier signalling an event: API 1.4
 * has no zeCommandListHostSynchronize). */
static void finish(ze_context_handle_t context, ze_device_handle_t device, ze_command_list_handle_t list) {
    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    ZE_OK(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    ze_event_desc_t event_desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, 0};
    ze_event_handle_t done;
    ZE_OK(zeEventCreate(pool, &event_desc, &done));
    ZE_OK(zeCommandListAppendBarrier(list, done, 0, NULL));
    ZE_OK(zeEventHostSynchronize(done, UINT64_MAX));
    ZE_OK(zeEventDestroy(done));
    ZE_OK(zeEventPoolDestroy(pool));
}

/* The first metric group of the device whose type has `type_flag`. */
static zet_metric_group_handle_t find_group(ze_device_handle_t device, uint32_t type_flag) {
    uint32_t count = 0;
    ZE_OK(zetMetricGroupGet(device, &count, NULL));
    zet_metric_group_handle_t groups[16];
    CHECK(count > 0 && count <= 16);
    ZE_OK(zetMetricGroupGet(device, &count, groups));
    for (uint32_t i = 0; i < count; ++i) {
        zet_metric_group_type_exp_t type = {(zet_structure_type_t)ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP, NULL, 0};
        zet_metric_group_properties_t props = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, .pNext = &type};
        ZE_OK(zetMetricGroupGetProperties(groups[i], &props));
        if ((props.samplingType & ZEHAL_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED) && (type.type & type_flag))
            return groups[i];
    }
    return NULL;
}

/* Kernel timestamps of a copy, in ticks and in the host's time domain. */
static void kernel_timestamps_sample(ze_context_handle_t context, ze_device_handle_t device,
                                     ze_command_list_handle_t list, void* dst, void* src, int use_kernel) {
    ze_event_query_kernel_timestamps_ext_properties_t caps = {
        (ze_structure_type_t)ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES, NULL, 0};
    ze_device_properties_t dev = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2, .pNext = &caps};
    ZE_OK(zeDeviceGetProperties(device, &dev));
    CHECK(caps.flags & ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_KERNEL);
    CHECK(caps.flags & ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_SYNCHRONIZED);

    for (int mapped = 0; mapped < 2; ++mapped) {
        ze_event_pool_desc_t pool_desc = {
            ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
            ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (mapped ? (1u << 3) : ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP), 1};
        ze_event_pool_handle_t pool;
        ZE_OK(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
        ze_event_desc_t event_desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                                      ZE_EVENT_SCOPE_FLAG_HOST};
        ze_event_handle_t event;
        ZE_OK(zeEventCreate(pool, &event_desc, &event));

        const uint64_t before = host_ns();
        if (use_kernel)
            fill_words(list, 1, dst, 7, 4096, event);
        else
            ZE_OK(zeCommandListAppendMemoryCopy(list, dst, src, 4096, event, 0, NULL));
        ZE_OK(zeEventHostSynchronize(event, UINT64_MAX));
        const uint64_t after = host_ns();

        uint32_t count = 0;
        ZE_OK(ext.query_timestamps(event, device, &count, NULL));
        CHECK(count >= 1);
        ze_kernel_timestamp_result_t* ticks = calloc(count, sizeof *ticks);
        ze_synchronized_timestamp_result_ext_t* synced = calloc(count, sizeof *synced);
        ze_event_query_kernel_timestamps_results_ext_properties_t results = {
            (ze_structure_type_t)ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES, NULL, ticks,
            mapped ? synced : NULL};
        ZE_OK(ext.query_timestamps(event, device, &count, &results));
        if (mapped) {
            CHECK(before <= synced[0].global.kernelStart);
            CHECK(synced[0].global.kernelStart <= synced[0].global.kernelEnd);
            CHECK(synced[0].global.kernelEnd <= after);
        } else {
            ze_kernel_timestamp_result_t core;
            ZE_OK(zeEventQueryKernelTimestamp(event, &core));
            CHECK(core.global.kernelStart == ticks[0].global.kernelStart);
        }
        free(ticks);
        free(synced);
        ZE_OK(zeEventDestroy(event));
        ZE_OK(zeEventPoolDestroy(pool));
    }
}

/* The tracer loop of the specification: activate, create, enable, run, read, decode. */
static void tracer_sample(ze_context_handle_t context, ze_device_handle_t device, ze_command_list_handle_t list,
                          void* dst, void* src, int use_kernel) {
    zet_metric_group_handle_t group = find_group(device, ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER);
    CHECK(group != NULL);
    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &group));

    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    ZE_OK(zeEventPoolCreate(context, &pool_desc, 1, &device, &pool));
    ze_event_desc_t event_desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, 0};
    ze_event_handle_t notification;
    ZE_OK(zeEventCreate(pool, &event_desc, &notification));

    zet_metric_tracer_exp_desc_t desc = {(zet_structure_type_t)ZEHAL_STYPE_METRIC_TRACER_EXP_DESC, NULL, 1024};
    zet_metric_tracer_exp_handle_t tracer;
    ZE_OK(ext.tracer_create(context, device, 1, &group, &desc, notification, &tracer));
    CHECK(desc.notifyEveryNBytes >= 1024);
    ZE_OK(ext.tracer_enable(tracer, 1));

    const uint64_t before = host_ns();
    for (int i = 0; i < 64; ++i) {
        if (use_kernel)
            fill_words(list, 1, dst, (uint32_t)i, 4096, NULL);
        else
            ZE_OK(zeCommandListAppendMemoryCopy(list, dst, src, 4096, NULL, 0, NULL));
    }
    finish(context, device, list);
    ZE_OK(zeEventHostSynchronize(notification, UINT64_MAX));
    const uint64_t after = host_ns();
    ZE_OK(ext.tracer_disable(tracer, 1));

    size_t raw_size = 0;
    ZE_OK(ext.tracer_read(tracer, &raw_size, NULL));
    CHECK(raw_size >= desc.notifyEveryNBytes);
    uint8_t* raw = malloc(raw_size);
    ZE_OK(ext.tracer_read(tracer, &raw_size, raw));

    zet_metric_decoder_exp_handle_t decoder;
    ZE_OK(ext.decoder_create(tracer, &decoder));
    uint32_t metric_count = 0;
    ZE_OK(ext.decodable(decoder, &metric_count, NULL));
    CHECK(metric_count > 0);
    zet_metric_handle_t* metrics = calloc(metric_count, sizeof *metrics);
    ZE_OK(ext.decodable(decoder, &metric_count, metrics));

    uint32_t set_count = 0, entry_count = 0;
    size_t size = raw_size;
    ZE_OK(ext.decode(decoder, &size, raw, metric_count, metrics, &set_count, NULL, &entry_count, NULL));
    CHECK(set_count == 1 && entry_count >= 64);
    uint32_t* per_set = calloc(set_count, sizeof *per_set);
    zet_metric_entry_exp_t* entries = calloc(entry_count, sizeof *entries);
    size = raw_size;
    ZE_OK(ext.decode(decoder, &size, raw, metric_count, metrics, &set_count, per_set, &entry_count, entries));
    CHECK(size == raw_size && per_set[0] == entry_count);
    for (uint32_t i = 0; i < entry_count; ++i) {
        CHECK(entries[i].metricIndex < metric_count);
        CHECK(before <= entries[i].timeStamp && entries[i].timeStamp <= after);
    }

    ZE_OK(ext.decoder_destroy(decoder));
    ZE_OK(ext.tracer_destroy(tracer));
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, NULL));
    ZE_OK(zeEventDestroy(notification));
    ZE_OK(zeEventPoolDestroy(pool));
    free(per_set);
    free(entries);
    free(metrics);
    free(raw);
}

/* Metric export memory: the group's dma-buf imported as device memory; a fill of it (or a
 * kernel's writes) shows in the tracer's data as an export-memory write of the pattern. */
static void export_sample(ze_context_handle_t context, ze_device_handle_t device, ze_command_list_handle_t list,
                          int use_kernel) {
    zet_metric_group_handle_t group = find_group(device, ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF);
    CHECK(group != NULL);
    zet_export_dma_buf_exp_properties_t dma = {(zet_structure_type_t)ZEHAL_STYPE_EXPORT_DMA_BUF_EXP_PROPERTIES, NULL,
                                               -1, 0};
    zet_metric_group_properties_t props = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES, .pNext = &dma};
    ZE_OK(zetMetricGroupGetProperties(group, &props));
    CHECK(dma.fd >= 0 && dma.size > 0);

    ze_external_memory_import_fd_t import = {ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD, NULL,
                                             ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF, dma.fd};
    ze_device_mem_alloc_desc_t alloc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &import, 0, 0};
    void* exported = NULL;
    ZE_OK(zeMemAllocDevice(context, &alloc, dma.size, 4096, device, &exported));

    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &group));
    zet_metric_tracer_exp_desc_t desc = {(zet_structure_type_t)ZEHAL_STYPE_METRIC_TRACER_EXP_DESC, NULL, 0};
    zet_metric_tracer_exp_handle_t tracer;
    ZE_OK(ext.tracer_create(context, device, 1, &group, &desc, NULL, &tracer));
    ZE_OK(ext.tracer_enable(tracer, 1));
    fill_words(list, use_kernel, exported, 0xABABABABu, 256, NULL);
    finish(context, device, list);
    ZE_OK(ext.tracer_disable(tracer, 1));

    size_t raw_size = 0;
    ZE_OK(ext.tracer_read(tracer, &raw_size, NULL));
    uint8_t* raw = malloc(raw_size);
    ZE_OK(ext.tracer_read(tracer, &raw_size, raw));
    zet_metric_decoder_exp_handle_t decoder;
    ZE_OK(ext.decoder_create(tracer, &decoder));
    uint32_t set_count = 0, entry_count = 0;
    size_t size = raw_size;
    ZE_OK(ext.decode(decoder, &size, raw, 0, NULL, &set_count, NULL, &entry_count, NULL));
    CHECK(entry_count >= 1);
    zet_metric_entry_exp_t* entries = calloc(entry_count, sizeof *entries);
    size = raw_size;
    ZE_OK(ext.decode(decoder, &size, raw, 0, NULL, &set_count, NULL, &entry_count, entries));
    int seen = 0;
    for (uint32_t i = 0; i < entry_count; ++i) seen |= (entries[i].value.ui32 & 0xFF) == 0xAB;
    CHECK(seen);

    ZE_OK(ext.decoder_destroy(decoder));
    ZE_OK(ext.tracer_destroy(tracer));
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, NULL));
    ZE_OK(zeMemFree(context, exported));
    free(entries);
    free(raw);
}

int main(void) {
    ZE_OK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    ZE_OK(zeDriverGet(&count, &driver));
    CHECK(has_extension(driver, ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_NAME));
    CHECK(has_extension(driver, ZET_METRICS_TRACER_EXP_NAME));
    CHECK(has_extension(driver, ZET_METRIC_EXPORT_MEMORY_EXP_NAME));
    resolve_all(driver);

    uint32_t device_count = 0;
    ZE_OK(zeDeviceGet(driver, &device_count, NULL));
    CHECK(device_count >= 1);
    ze_device_handle_t* devices = calloc(device_count, sizeof *devices);
    ZE_OK(zeDeviceGet(driver, &device_count, devices));

    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t context;
    ZE_OK(zeContextCreate(driver, &context_desc, &context));
    for (uint32_t d = 0; d < device_count; ++d) {
        ze_device_handle_t device = devices[d];
        ze_command_queue_desc_t queue_desc = {
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t list;
        ZE_OK(zeCommandListCreateImmediate(context, device, &queue_desc, &list));
        ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
        ze_device_mem_alloc_desc_t dev_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
        void *src = NULL, *dst = NULL;
        ZE_OK(zeMemAllocHost(context, &host_desc, 4096, 64, &src));
        ZE_OK(zeMemAllocDevice(context, &dev_desc, 4096, 64, device, &dst));

        ze_module_handle_t module = NULL;
        load_fill_kernel(context, device, &module);
        for (int use_kernel = 0; use_kernel < (fill_kernel ? 2 : 1); ++use_kernel) {
            kernel_timestamps_sample(context, device, list, dst, src, use_kernel);
            tracer_sample(context, device, list, dst, src, use_kernel);
            export_sample(context, device, list, use_kernel);
        }
        if (fill_kernel) {
            ZE_OK(zeKernelDestroy(fill_kernel));
            ZE_OK(zeModuleDestroy(module));
        }

        ZE_OK(zeMemFree(context, src));
        ZE_OK(zeMemFree(context, dst));
        ZE_OK(zeCommandListDestroy(list));
        printf("seed samples passed on device %u%s\n", d, fill_kernel ? ", with copies and with a kernel" : "");
    }
    ZE_OK(zeContextDestroy(context));
    free(devices);
    return 0;
}
