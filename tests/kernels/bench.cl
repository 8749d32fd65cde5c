// Benchmark kernels: a compute-bound one (a polynomial evaluated by `steps` iterations per
// element), beside saxpy.cl's memory-bound one.
kernel void polynomial(global float* y, float a, float b, uint steps) {
    const size_t i = get_global_id(0);
    float v = y[i];
    for (uint s = 0; s < steps; ++s) {
        v = v * a + b;
    }
    y[i] = v;
}
