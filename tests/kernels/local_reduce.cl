// Sum of each group's elements by a tree reduction in __local memory given as an
// argument (one uint per work-item), with barriers; any power-of-two group size.
kernel void reduce_sum(global const uint* in, global uint* out, local uint* scratch) {
    const size_t lid = get_local_id(0);
    const size_t size = get_local_size(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = size / 2; stride > 0; stride /= 2) {
        if (lid < stride) {
            scratch[lid] += scratch[lid + stride];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        out[get_group_id(0)] = scratch[0];
    }
}

// Reverses each group's elements through a static __local array (groups of up to 256).
kernel void reverse_in_group(global const uint* in, global uint* out) {
    local uint tile[256];
    const size_t lid = get_local_id(0);
    const size_t size = get_local_size(0);
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[size - 1 - lid];
}
