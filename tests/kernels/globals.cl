// Built with -cl-std=CL2.0 (program-scope `global` variables need OpenCL C 2.0).
// Program-scope variables, which the host reaches through zeModuleGetGlobalPointer: a
// counter each launch reads and bumps, a writable array, and a __constant table.
global int counter = 5;
global float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
constant uint table[8] = {1, 2, 3, 5, 8, 13, 21, 34};

// out[0] = counter before the launch; the counter goes up by one (one work-item).
kernel void bump_counter(global int* out) {
    out[0] = counter;
    counter += 1;
}

// out[i] = table[i] * weights[i % 4], for i < 8.
kernel void weigh_table(global float* out) {
    const size_t i = get_global_id(0);
    if (i < 8) out[i] = (float)table[i] * weights[i % 4];
}
