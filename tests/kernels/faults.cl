// Kernels that fault on purpose: a store at an arbitrary address, and a store far past
// the end of a buffer.
kernel void store_at(ulong address, uint value) {
    *(global uint*)address = value;
}

kernel void store_past_end(global uint* data, ulong index) {
    data[index + get_global_id(0)] = 1;
}
