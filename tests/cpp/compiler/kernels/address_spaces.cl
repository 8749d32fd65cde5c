// Memory beyond __global pointers (OpenCL C 2.0): generic pointers into private, __local
// and __global memory, builtins through generic and __constant pointers, __constant
// arguments and module-scope __constant tables, structs that hold pointers.

__constant int kSquares[8] = {0, 1, 4, 9, 16, 25, 36, 49};

// Adds `v` to the int `p` points to, in whichever space.
void add_to(int* p, int v) { *p += v; }

// The int `p` points to, in whichever space.
int read_from(const int* p) { return *p; }

// out[i] = 2 * in[i] + 13: 3 through generic pointers to private, local and global memory,
// 10 through a generic pointer whose space depends on i. Groups of at most 64.
kernel void generic_pointers(global int* out, global const int* in) {
    local int shared[64];
    const size_t i = get_global_id(0);
    const size_t l = get_local_id(0);
    int mine = in[i];
    add_to(&mine, 1);
    shared[l] = in[i];
    add_to(&shared[l], 2);
    out[i] = mine;
    add_to(&out[i], read_from(&shared[l]));
    int* any = i % 3 == 0 ? (int*)&out[i] : i % 3 == 1 ? (int*)&shared[l] : &mine;
    add_to(any, 10);
    if (i % 3 != 0) {
        out[i] += read_from(any) - (i % 3 == 1 ? in[i] + 2 : in[i] + 1);
    }
}

// vload2 from a __constant argument, vstore2 through a generic pointer to private memory
// and to global memory: out[2i..2i+1] = 2 * table[2i..2i+1]. An atomic through a generic
// pointer: counter[0] counts the work-items.
kernel void generic_builtins(global int* out, constant int* table, global int* counter) {
    const size_t i = get_global_id(0);
    int pair[2];
    vstore2(vload2(i, table) * 2, 0, (int*)pair);
    vstore2(vload2(0, (const int*)pair), i, (int*)out);
    atomic_fetch_add_explicit((volatile atomic_int*)(int*)counter, 1, memory_order_relaxed);
}

// out[i] = table[i % n] + kSquares[i % 8]: a __constant argument and a module-scope table.
kernel void constant_tables(global int* out, constant int* table, int n) {
    const size_t i = get_global_id(0);
    out[i] = table[i % n] + kSquares[i % 8];
}

// The conformance suite's indirect copy: buffers of structs holding (generic) pointers;
// work-item i copies `count` ints from in[i].data to out[i].data.
struct Indirect {
    uint* data;
};

kernel void copy_indirect(global struct Indirect* in, global struct Indirect* out, int count) {
    const size_t i = get_global_id(0);
    for (int k = 0; k < count; ++k) {
        out[i].data[k] = in[i].data[k];
    }
}
