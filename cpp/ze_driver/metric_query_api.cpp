// Metric queries: pools, queries, their begin and end in command lists, their results,
// and the metric memory barrier.
#include "command_list.hpp"
#include "dispatch.hpp"
#include "metric_objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

ze_result_t zetMetricQueryPoolCreate_(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                      zet_metric_group_handle_t hMetricGroup, const zet_metric_query_pool_desc_t* desc,
                                      zet_metric_query_pool_handle_t* phMetricQueryPool) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        metrics::MetricGroupRef g;
        if (ze_result_t r = metric_target(hContext, hDevice, hMetricGroup, &d, &g); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phMetricQueryPool) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (desc->type != ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE && desc->type != ZET_METRIC_QUERY_POOL_TYPE_EXECUTION)
            return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        auto object = std::make_shared<QueryPoolObject>();
        if (ze_result_t r = metrics::QueryPool::create(d->device, g.get(), desc->count, &object->pool);
            r != ZE_RESULT_SUCCESS)
            return r;
        *phMetricQueryPool = to_handle<zet_metric_query_pool_handle_t>(query_pools().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Queries made from the pool stay usable: each keeps what it needs of the pool.
ze_result_t zetMetricQueryPoolDestroy_(zet_metric_query_pool_handle_t hMetricQueryPool) {
    return ze_guarded([&] {
        return query_pools().remove(hMetricQueryPool) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    });
}

ze_result_t zetMetricQueryCreate_(zet_metric_query_pool_handle_t hMetricQueryPool, uint32_t index,
                                  zet_metric_query_handle_t* phMetricQuery) {
    return ze_guarded([&] {
        std::shared_ptr<QueryPoolObject> p;
        if (ze_result_t r = query_pools().get(hMetricQueryPool, &p); r != ZE_RESULT_SUCCESS) return r;
        if (!phMetricQuery) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        auto object = std::make_shared<QueryObject>();
        if (ze_result_t r = metrics::Query::create(p->pool, index, &object->query); r != ZE_RESULT_SUCCESS) return r;
        *phMetricQuery = to_handle<zet_metric_query_handle_t>(queries().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricQueryDestroy_(zet_metric_query_handle_t hMetricQuery) {
    return ze_guarded(
        [&] { return queries().remove(hMetricQuery) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE; });
}

// Runs `f` on the query of `hMetricQuery`.
template <typename F>
ze_result_t with_query(zet_metric_query_handle_t hMetricQuery, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<QueryObject> q;
        if (ze_result_t r = queries().get(hMetricQuery, &q); r != ZE_RESULT_SUCCESS) return r;
        return f(*q->query);
    });
}

ze_result_t zetMetricQueryReset_(zet_metric_query_handle_t hMetricQuery) {
    return with_query(hMetricQuery, [](metrics::Query& q) { return q.reset(); });
}

ze_result_t zetMetricQueryGetData_(zet_metric_query_handle_t hMetricQuery, size_t* pRawDataSize, uint8_t* pRawData) {
    return with_query(hMetricQuery, [&](metrics::Query& q) { return q.get_data(pRawDataSize, pRawData); });
}

// Runs `f` on the list of `hCommandList` and the query of `hMetricQuery`, which must be of
// the list's device (else INVALID_ARGUMENT).
template <typename F>
ze_result_t with_list_and_query(zet_command_list_handle_t hCommandList, zet_metric_query_handle_t hMetricQuery, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<QueryObject> q;
        if (ze_result_t r = queries().get(hMetricQuery, &q); r != ZE_RESULT_SUCCESS) return r;
        if (q->query->pool().device() != list->device()->device) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        return f(*list, *q->query);
    });
}

// The begin: the device's global timestamp into the query's begin slot, in queue order.
ze_result_t zetCommandListAppendMetricQueryBegin_(zet_command_list_handle_t hCommandList,
                                                  zet_metric_query_handle_t hMetricQuery) {
    return with_list_and_query(hCommandList, hMetricQuery, [](CommandListObject& l, metrics::Query& q) {
        Command c;
        c.kind = Command::Kind::write_timestamp;
        c.dst = q.begin_slot();
        if (ze_result_t r = l.append(std::move(c)); r != ZE_RESULT_SUCCESS) return r;
        q.began();
        return ZE_RESULT_SUCCESS;
    });
}

// The end: after the waits, the global timestamp into the end slot, signalling the query's
// own event; then the caller's event, if any, once that is done.
ze_result_t zetCommandListAppendMetricQueryEnd_(zet_command_list_handle_t hCommandList,
                                                zet_metric_query_handle_t hMetricQuery, ze_event_handle_t hSignalEvent,
                                                uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    return with_list_and_query(hCommandList, hMetricQuery, [&](CommandListObject& l, metrics::Query& q) {
        Command end;
        end.kind = Command::Kind::write_timestamp;
        end.dst = q.end_slot();
        end.signal = q.end_event();
        if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &end.waits); r != ZE_RESULT_SUCCESS) return r;
        Command after;
        if (ze_result_t r = optional_event(hSignalEvent, &after.signal); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = l.append(std::move(end)); r != ZE_RESULT_SUCCESS) return r;
        q.ended();
        return after.signal ? l.append(std::move(after)) : ZE_RESULT_SUCCESS;
    });
}

// Counters are read from the device's history when a query's data is asked for, so making
// them visible needs no more than ordering: a barrier.
ze_result_t zetCommandListAppendMetricMemoryBarrier_(zet_command_list_handle_t hCommandList) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        return list->append(Command{});
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zetMetricQueryPoolCreate, zetMetricQueryPoolCreate_),
    ZEHAL_ENTRY(zetMetricQueryPoolDestroy, zetMetricQueryPoolDestroy_),
    ZEHAL_ENTRY(zetMetricQueryCreate, zetMetricQueryCreate_),
    ZEHAL_ENTRY(zetMetricQueryDestroy, zetMetricQueryDestroy_),
    ZEHAL_ENTRY(zetMetricQueryReset, zetMetricQueryReset_),
    ZEHAL_ENTRY(zetMetricQueryGetData, zetMetricQueryGetData_),
    ZEHAL_ENTRY(zetCommandListAppendMetricQueryBegin, zetCommandListAppendMetricQueryBegin_),
    ZEHAL_ENTRY(zetCommandListAppendMetricQueryEnd, zetCommandListAppendMetricQueryEnd_),
    ZEHAL_ENTRY(zetCommandListAppendMetricMemoryBarrier, zetCommandListAppendMetricMemoryBarrier_),
};

}  // namespace

std::span<const Entry> metric_query_entries() { return kEntries; }

}  // namespace zehal::ze_driver
