// Kernels that call functions through pointers (clang's __cl_clang_function_pointers,
// SPV_INTEL_function_pointers): a pointer the host passes as a long
// (zeModuleGetFunctionPointer), and pointers the kernel takes itself.
#pragma OPENCL EXTENSION __cl_clang_function_pointers : enable

typedef int (*unary)(int);

int add_one(int a) { return a + 1; }

// Reads the work-item's id: the call through a pointer passes the work-item's context.
int add_global_id(int a) { return a + (int)get_global_id(0); }

// Reaches a barrier: no pointer is handed out for it.
int after_barrier(int a) {
    barrier(CLK_LOCAL_MEM_FENCE);
    return a;
}

kernel void call_pointer(long function, global int* out) {
    const unary f = (unary)function;
    out[get_global_id(0)] = f((int)get_global_id(0) * 10);
}

kernel void call_own_pointers(global int* out) {
    const size_t i = get_global_id(0);
    const long taken = (i % 2) ? (long)add_global_id : (long)add_one;
    const unary f = (unary)taken;
    out[i] = f(100) + after_barrier(0);
}
