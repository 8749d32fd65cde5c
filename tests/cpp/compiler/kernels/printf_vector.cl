// printf of a vector (OpenCL's %v4f), which CUDA's device printf cannot take.
kernel void print_vector(global float4* values) {
    printf("%v4f\n", values[get_global_id(0)]);
}
