// Benchmark kernels: a compute-bound one (a polynomial evaluated by `steps` iterations per
// element) and a memory-bound one (saxpy without saxpy.cl's bounds check).
kernel void polynomial(global float* y, float a, float b, uint steps) {
    const size_t i = get_global_id(0);
    float v = y[i];
    for (uint s = 0; s < steps; ++s) {
        v = v * a + b;
    }
    y[i] = v;
}

// saxpy over exactly the launch (no bounds check, as when the launch is the data's size).
kernel void saxpy_exact(global float* y, global const float* x, float a) {
    const size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
