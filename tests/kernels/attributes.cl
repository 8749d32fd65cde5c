// A kernel with reqd_work_group_size, one that does nothing, one with hints, and one not to
// be inlined.
__attribute__((reqd_work_group_size(8, 4, 1)))
kernel void reqd_size(global uint* out) {
    const size_t linear = get_global_id(1) * get_global_size(0) + get_global_id(0);
    out[linear] = (uint)(get_local_id(1) * 8 + get_local_id(0));
}

kernel void empty(void) {}

__attribute__((work_group_size_hint(1, 1, 1))) __attribute__((vec_type_hint(float4)))
kernel void hinted(global float4* out) {
    out[get_global_id(0)] += (float4)(1, 2, 3, 4);
}

// A kernel its compiler marks not to be inlined (SPIR-V's DontInline function control).
__attribute__((noinline))
kernel void not_inlined(global int* out) {
    out[get_global_id(0)] = 7;
}

// Private arrays and a struct passed by value.
typedef struct {
    int scale;
    float bias;
    long offset;
} Params;

kernel void by_value(global float* out, Params p) {
    float table[8];
    for (int i = 0; i < 8; ++i) {
        table[i] = i * p.scale + p.bias;
    }
    const size_t i = get_global_id(0);
    out[i] = table[i % 8] + (float)p.offset;
}
