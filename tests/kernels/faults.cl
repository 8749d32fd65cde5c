// Kernels that fault on purpose: a store at an arbitrary address, and a store far past
// the end of a buffer.
kernel void store_at(ulong address, uint value) {
    *(global uint*)address = value;
}

kernel void store_past_end(global uint* data, ulong index) {
    data[index + get_global_id(0)] = 1;
}

// With barriers: after two barriers, the group's last work-item stores at `address`
// (the others are suspended at the second barrier or have ended when it faults).
kernel void store_at_after_barriers(ulong address, uint value) {
    local uint seen[64];
    seen[get_local_id(0)] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint first = seen[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == get_local_size(0) - 1) {
        *(global uint*)address = first + (uint)get_group_id(0);
    }
}
