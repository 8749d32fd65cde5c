// Buffer kernels: copy, add and fill, one work-item per element.
kernel void copy_bytes(global uchar* dst, global const uchar* src) {
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}

kernel void copy_uint(global uint* dst, global const uint* src) {
    const size_t i = get_global_id(0);
    dst[i] = src[i];
}

kernel void add_float(global const float* a, global const float* b, global float* c) {
    const size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

kernel void add_int_constant(global const int* in, global int* out, int value) {
    const size_t i = get_global_id(0);
    out[i] = in[i] + value;
}

kernel void fill_uint(global uint* dst, uint value) {
    dst[get_global_id(0)] = value;
}

// A loop in one work-item over a range, with a 64-bit value argument.
kernel void fill_range_ulong(global ulong* dst, uint count, ulong value) {
    if (get_global_id(0) == 0) {
        for (uint i = 0; i < count; ++i) {
            dst[i] = value + i;
        }
    }
}
