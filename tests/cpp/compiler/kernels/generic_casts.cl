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
