// Specialization constants (SPIR-V OpSpecConstant with a SpecId, made by the translator from
// __spirv_SpecConstant calls, as level-zero-tests' kernels make them): out[0] holds the
// 64-bit constant 0 (default 10), out[1] the 32-bit constant 1 (default 30), out[2] the
// signed 16-bit constant 2 (default -3) widened to 64 bits, out[3] 1 when the boolean
// constant 3 (default false) is true. spec_floats takes the float constant 4 and the double
// constant 5.
ulong __attribute__((overloadable)) __spirv_SpecConstant(int, ulong);
uint __attribute__((overloadable)) __spirv_SpecConstant(int, uint);
short __attribute__((overloadable)) __spirv_SpecConstant(int, short);
bool __attribute__((overloadable)) __spirv_SpecConstant(int, bool);

kernel void spec_constants(global long* out) {
    out[0] = (long)__spirv_SpecConstant(0, 10ul);
    out[1] = (long)__spirv_SpecConstant(1, 30u);
    out[2] = (long)__spirv_SpecConstant(2, (short)-3);
    out[3] = __spirv_SpecConstant(3, false) ? 1 : 0;
}

// out[0] the float constant 4 (default 1.5), out[1] the double constant 5 (default 0.25).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
float __attribute__((overloadable)) __spirv_SpecConstant(int, float);
double __attribute__((overloadable)) __spirv_SpecConstant(int, double);

kernel void spec_floats(global double* out) {
    out[0] = (double)__spirv_SpecConstant(4, 1.5f);
    out[1] = __spirv_SpecConstant(5, 0.25);
}
