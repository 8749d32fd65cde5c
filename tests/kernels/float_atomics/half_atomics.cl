// Floating-point atomics (cl_ext_float_atomics, OpenCL C 3.0) of half under contention:
// min, max, exchange, store and load in global and local memory. Every value is an
// integer below 2048, which half holds exactly.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// counters: [0] max of id, [1] min of id, [2] exchange of id, [3] store of id, [4] read
// by every work-item into loads[id].
kernel void half_global(global atomic_half* counters, global half* loads) {
    const size_t gid = get_global_id(0);
    const half id = (half)gid;
    atomic_fetch_max_explicit(&counters[0], id, memory_order_relaxed);
    atomic_fetch_min_explicit(&counters[1], id, memory_order_relaxed);
    atomic_exchange_explicit(&counters[2], id, memory_order_relaxed);
    atomic_store_explicit(&counters[3], id, memory_order_relaxed);
    loads[gid] = atomic_load_explicit(&counters[4], memory_order_relaxed);
}

// totals[2 * group + k]: [0] the minimum and [1] the maximum of the local ids, each made by
// local atomics.
kernel void half_local(global half* totals) {
    local atomic_half low, high;
    const size_t lid = get_local_id(0);
    const half id = (half)lid;
    const memory_scope group = memory_scope_work_group;
    if (lid == 0) {
        atomic_store_explicit(&low, (half)2048, memory_order_relaxed, group);
        atomic_store_explicit(&high, (half)-1, memory_order_relaxed, group);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_min_explicit(&low, id, memory_order_relaxed, group);
    atomic_fetch_max_explicit(&high, id, memory_order_relaxed, group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        totals[2 * get_group_id(0)] = atomic_load_explicit(&low, memory_order_relaxed, group);
        totals[2 * get_group_id(0) + 1] = atomic_load_explicit(&high, memory_order_relaxed, group);
    }
}
