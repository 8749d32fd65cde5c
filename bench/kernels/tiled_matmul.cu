// A tiled single-precision matrix multiplication in CUDA C, for bench/matmul_vs_nvcc.cpp:
// 16 x 16 thread blocks, one 16 x 16 tile of each operand staged in shared memory per step,
// the operands indexed as level-zero-tests' metric kernel indexes them (a and c by columns of
// m elements, b by rows of k), so that both run the same algorithm on the same data.
#define TILE 16

extern "C" __global__ void __launch_bounds__(TILE* TILE)
    tiled_matmul(const float* a, const float* b, int m, int k, int n, float* c) {
    __shared__ float a_tile[TILE * TILE];
    __shared__ float b_tile[TILE * TILE];
    const int lx = threadIdx.x;
    const int ly = threadIdx.y;
    const int gx = blockIdx.x * TILE + lx;
    const int gy = blockIdx.y * TILE + ly;
    float sum = 0.0f;
    for (int step = 0; step < k / TILE; ++step) {
        a_tile[ly * TILE + lx] = a[(step * TILE + ly) * m + gx];
        b_tile[ly * TILE + lx] = b[gy * k + step * TILE + lx];
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += a_tile[i * TILE + lx] * b_tile[ly * TILE + i];
        __syncthreads();
    }
    (void)n;
    c[gy * m + gx] = sum;
}
