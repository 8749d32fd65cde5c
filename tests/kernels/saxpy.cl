// y = a * x + y over n elements (the launch may round n up to whole groups).
kernel void saxpy(global float* y, global const float* x, float a, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
