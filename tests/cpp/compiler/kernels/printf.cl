// printf with every kind of argument C passes to it (promoted floats and small integers,
// 64-bit integers, pointers to global memory and to __constant strings), and without
// arguments: out[i] = i tells that the kernel ran.
kernel void print_values(global int* out, float f, double d, long l, short s, char c) {
    const int i = (int)get_global_id(0);
    printf("item %d: float %.2f double %.3f long %ld short %hd char %c string %s\n", i, f, d, l, s, c, "text");
    if (i == 0) {
        printf("pointer is null: %d\n", out == 0);
    }
    out[i] = i;
}
