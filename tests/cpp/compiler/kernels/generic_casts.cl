// OpenCL C 2.0's to_global, to_local and to_private on a generic pointer whose space
// depends on the work-item: out[i] has bit 0 set when to_global(p) is not null, bit 1
// for to_local, bit 2 for to_private (work-items 0, 3, 6... point into global memory,
// 1, 4, 7... into local memory, the others into private memory). The local pointer is not
// the array's first element: on NVPTX, a __local null pointer is shared address 0, which
// the first __local variable may have.
kernel void generic_casts(global int* out) {
    local int shared[2];
    int mine = 0;
    const size_t i = get_global_id(0);
    int* p = i % 3 == 0 ? (int*)&out[i] : i % 3 == 1 ? (int*)&shared[1] : &mine;
    const int seen = (to_global(p) != 0 ? 1 : 0) | (to_local(p) != 0 ? 2 : 0) | (to_private(p) != 0 ? 4 : 0);
    out[i] = seen;
}

// The casts give back the pointer itself (out[i] has bit 0 set when to_global(p) == p,
// bit 1 for to_local, bit 2 for to_private), in a kernel with barriers and a __local
// argument. out[i] holds the space work-item i points into: 0 global memory, 1 __local
// memory (the static array in even groups, the last element of the __local argument in odd
// ones), 2 a private array.
kernel void generic_casts_exact(global int* out, local int* dynamic) {
    local int shared[2];
    int mine[3];
    const size_t i = get_global_id(0);
    const size_t l = get_local_id(0);
    const int space = out[i];
    mine[l % 3] = space;
    dynamic[l] = space;
    barrier(CLK_LOCAL_MEM_FENCE);
    local int* last = &dynamic[get_local_size(0) - 1];
    local int* in_local = get_group_id(0) % 2 == 0 ? &shared[1] : last;
    int* p = space == 0 ? (int*)&out[i] : space == 1 ? (int*)in_local : &mine[l % 3];
    const int seen = ((int*)to_global(p) == p ? 1 : 0) | ((int*)to_local(p) == p ? 2 : 0) |
                     ((int*)to_private(p) == p ? 4 : 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = seen;
}
