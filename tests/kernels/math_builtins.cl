// Math, common and integer builtins: out[i * 16 + j] holds result j for input i.
kernel void float_builtins(global const float* in, global float* out) {
    const size_t i = get_global_id(0);
    const float x = in[i];
    global float* o = out + i * 16;
    o[0] = sqrt(fabs(x));
    o[1] = fmin(x, 0.5f) + fmax(x, -0.5f);
    o[2] = floor(x) + ceil(x) * 10.0f;
    o[3] = exp(x * 0.1f);
    o[4] = log(fabs(x) + 1.0f);
    o[5] = sin(x) + cos(x);
    o[6] = pow(fabs(x), 1.5f);
    o[7] = mad(x, 2.0f, 1.0f) + fma(x, x, -1.0f);
    o[8] = clamp(x, -1.0f, 1.0f);
    o[9] = native_sqrt(fabs(x)) + rsqrt(fabs(x) + 1.0f);
    o[10] = tan(x * 0.1f) + atan2(x, 2.0f);
    o[11] = min(x, 2.0f) + max(x, -2.0f);
    o[12] = trunc(x) + round(x) * 10.0f;
    o[13] = exp2(x * 0.1f) + log2(fabs(x) + 1.0f);
    o[14] = copysign(1.0f, x) + sign(x) * 10.0f;
    o[15] = mix(x, 1.0f, 0.25f);
}

kernel void int_builtins(global const int* in, global int* out) {
    const size_t i = get_global_id(0);
    const int x = in[i];
    global int* o = out + i * 8;
    o[0] = min(x, 7) + max(x, -7) * 100;
    o[1] = clamp(x, -3, 3);
    o[2] = (int)abs(x);
    o[3] = (int)min((uint)x, 9u);
    o[4] = popcount(x);
    o[5] = clz(x);
    o[6] = mul24(x, 3) + mad24(x, 2, 1);
    o[7] = (int)rotate((uint)x, 4u);
}

kernel void vector_builtins(global const float4* in, global float4* out, global float* dots) {
    const size_t i = get_global_id(0);
    const float4 v = in[i];
    out[i] = fmax(sqrt(fabs(v)), (float4)(0.5f));
    dots[i] = dot(v, v);
}
