// Floating-point atomics (cl_ext_float_atomics, OpenCL C 3.0) of float and double under
// contention: every work-item updates the same few words, in global and in local memory.
// Every value is a small integer, so every order of the adds gives the exact sum.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// counters: [0] += 1 (the value each work-item saw in olds[id]), [1] += id, [2] -= 1,
// [3] max of id, [4] min of id, [5] exchange of id, [6] store of id, [7] read by every
// work-item into loads[id], [8] a -0.0 that the loads must leave as it is.
#define GLOBAL_ATOMICS(T, A, NAME)                                                         \
    kernel void NAME(global A* counters, global T* olds, global T* loads) {                 \
        const size_t gid = get_global_id(0);                                                \
        const T id = (T)gid;                                                                \
        olds[gid] = atomic_fetch_add_explicit(&counters[0], (T)1, memory_order_relaxed);    \
        atomic_fetch_add_explicit(&counters[1], id, memory_order_relaxed);                  \
        atomic_fetch_sub_explicit(&counters[2], (T)1, memory_order_relaxed);                \
        atomic_fetch_max_explicit(&counters[3], id, memory_order_relaxed);                  \
        atomic_fetch_min_explicit(&counters[4], id, memory_order_relaxed);                  \
        atomic_exchange_explicit(&counters[5], id, memory_order_relaxed);                   \
        atomic_store_explicit(&counters[6], id, memory_order_relaxed);                      \
        loads[gid] = atomic_load_explicit(&counters[7], memory_order_relaxed) +             \
                     atomic_load_explicit(&counters[8], memory_order_relaxed);              \
    }

// The same in a group's local memory: totals[4 * group + k] is [0] the count, [1] the sum
// of the local ids, [2] their minimum, [3] their maximum, each made by local atomics.
#define LOCAL_ATOMICS(T, A, NAME)                                                          \
    kernel void NAME(global T* totals) {                                                    \
        local A count, sum, low, high;                                                      \
        const size_t lid = get_local_id(0);                                                 \
        const T id = (T)lid;                                                                \
        const memory_scope group = memory_scope_work_group;                                 \
        if (lid == 0) {                                                                     \
            atomic_store_explicit(&count, (T)0, memory_order_relaxed, group);              \
            atomic_store_explicit(&sum, (T)0, memory_order_relaxed, group);                \
            atomic_store_explicit(&low, (T)1e4, memory_order_relaxed, group);              \
            atomic_store_explicit(&high, (T)-1, memory_order_relaxed, group);              \
        }                                                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        atomic_fetch_add_explicit(&count, (T)1, memory_order_relaxed, group);              \
        atomic_fetch_add_explicit(&sum, id, memory_order_relaxed, group);                  \
        atomic_fetch_min_explicit(&low, id, memory_order_relaxed, group);                  \
        atomic_fetch_max_explicit(&high, id, memory_order_relaxed, group);                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        if (lid == 0) {                                                                     \
            global T* out = totals + 4 * get_group_id(0);                                   \
            out[0] = atomic_load_explicit(&count, memory_order_relaxed, group);            \
            out[1] = atomic_load_explicit(&sum, memory_order_relaxed, group);              \
            out[2] = atomic_load_explicit(&low, memory_order_relaxed, group);              \
            out[3] = atomic_load_explicit(&high, memory_order_relaxed, group);             \
        }                                                                                   \
    }

GLOBAL_ATOMICS(float, atomic_float, float_global)
GLOBAL_ATOMICS(double, atomic_double, double_global)
LOCAL_ATOMICS(float, atomic_float, float_local)
LOCAL_ATOMICS(double, atomic_double, double_local)
