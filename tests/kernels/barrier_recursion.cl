// A barrier in a recursive function (OpenCL C forbids recursion; clang compiles it): the
// host cannot make it a suspend point, and the module build fails with a log saying why.
// Two calls, so that the optimiser cannot turn the recursion into a loop.
void level(local int* scratch, int depth) {
    scratch[get_local_id(0)] += depth;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (depth > 0) {
        level(scratch, depth - 1);
        level(scratch, depth - 2);
    }
}

kernel void recursive_barrier(global int* out, local int* scratch, int depth) {
    level(scratch, depth);
    out[get_global_id(0)] = scratch[0];
}
