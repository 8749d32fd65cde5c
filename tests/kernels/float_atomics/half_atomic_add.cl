// The add of half (OpAtomicFAddEXT on a 16-bit float, SPV_EXT_shader_atomic_float16_add),
// which clang-15 and llvm-spirv-15 cannot write: the kernels say atomic_fetch_min, and the
// test that runs them turns each OpAtomicFMinEXT into OpAtomicFAddEXT (and the capability
// AtomicFloat16MinMaxEXT into AtomicFloat16AddEXT) before building the module.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// sums[0] += 1 from every work-item (olds[id]: the value it saw), sums[1] += id % 4.
kernel void half_add_global(global atomic_half* sums, global half* olds) {
    const size_t gid = get_global_id(0);
    olds[gid] = atomic_fetch_min_explicit(&sums[0], (half)1, memory_order_relaxed);
    atomic_fetch_min_explicit(&sums[1], (half)(gid % 4), memory_order_relaxed);
}

// totals[group]: the count of the group's work-items, made by an add in local memory.
kernel void half_add_local(global half* totals) {
    local atomic_half count;
    const memory_scope group = memory_scope_work_group;
    if (get_local_id(0) == 0) {
        atomic_store_explicit(&count, (half)0, memory_order_relaxed, group);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_min_explicit(&count, (half)1, memory_order_relaxed, group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        totals[get_group_id(0)] = atomic_load_explicit(&count, memory_order_relaxed, group);
    }
}
