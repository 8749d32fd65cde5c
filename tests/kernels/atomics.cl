#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
// Atomics under contention: every work-item updates the same few counters.
// counters: [0] add, [1] inc, [2] sub from 0, [3] max, [4] min, [5] or of bits,
// [6] xchg (any id), [7] cmpxchg-loop add of 2, [8] group totals from local atomics.
kernel void atomics_32(global int* counters, local int* group_count) {
    const int id = (int)get_global_id(0);
    if (get_local_id(0) == 0) {
        *group_count = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&counters[0], 3);
    atomic_inc(&counters[1]);
    atomic_sub(&counters[2], 1);
    atomic_max(&counters[3], id);
    atomic_min(&counters[4], id);
    atomic_or(&counters[5], 1 << (id % 31));
    atomic_xchg(&counters[6], id);
    int old = counters[7];
    while (atomic_cmpxchg(&counters[7], old, old + 2) != old) {
        old = counters[7];
    }
    atomic_inc(group_count);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        atomic_add(&counters[8], *group_count);
    }
}

// 64-bit atomics: [0] add of the id, [1] max of id << 33, [2] xor of id.
kernel void atomics_64(global ulong* counters) {
    const ulong id = get_global_id(0);
    atom_add(&counters[0], id);
    atom_max(&counters[1], id << 33);
    atom_xor(&counters[2], id);
}

// A histogram in local memory, merged into the global one: the conformance suite's
// pattern of local atomics followed by global atomics.
kernel void histogram(global const uchar* data, global uint* bins) {
    local uint local_bins[16];
    const size_t lid = get_local_id(0);
    if (lid < 16) {
        local_bins[lid] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&local_bins[data[get_global_id(0)] % 16]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) {
        atomic_add(&bins[lid], local_bins[lid]);
    }
}
