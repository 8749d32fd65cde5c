// Tiled matrix multiplication, C = A * B with A m x k, B k x n, row-major, through 16 x 16
// tiles in static __local memory and two barriers per tile (the shape of the conformance
// suite's metric kernel). m, n and k are multiples of 16.
#define TILE 16
__attribute__((reqd_work_group_size(TILE, TILE, 1)))
kernel void matrix_multiply(global const float* a, global const float* b, global float* c,
                            int m, int k, int n) {
    local float a_tile[TILE * TILE];
    local float b_tile[TILE * TILE];
    const int col = get_global_id(0);
    const int row = get_global_id(1);
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    float sum = 0.0f;
    for (int t = 0; t < k / TILE; ++t) {
        a_tile[ly * TILE + lx] = a[row * k + t * TILE + lx];
        b_tile[ly * TILE + lx] = b[(t * TILE + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < TILE; ++i) {
            sum += a_tile[ly * TILE + i] * b_tile[i * TILE + lx];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = sum;
}
