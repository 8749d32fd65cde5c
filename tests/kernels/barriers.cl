// Barriers where the host runs each work-item as a coroutine: in loops, in conditionals
// that every work-item takes alike, in a function of their own, with values and private
// arrays live across them, in groups of three dimensions; and a barrier that only some
// work-items reach.

// out[gid] = the sum over `rounds` rounds of the neighbour's value (the next work-item of
// the group, cyclically), each round adding the round number to every value.
kernel void barrier_in_loop(global int* out, local int* values, int rounds) {
    const size_t lid = get_local_id(0);
    const size_t size = get_local_size(0);
    int mine = (int)get_global_id(0);
    int sum = 0;
    for (int r = 0; r < rounds; ++r) {
        values[lid] = mine;
        barrier(CLK_LOCAL_MEM_FENCE);
        sum += values[(lid + 1) % size];
        barrier(CLK_LOCAL_MEM_FENCE);
        mine += r;
    }
    out[get_global_id(0)] = sum;
}

// With `flip` set, each group reverses its elements through __local memory (a barrier in
// a branch every work-item takes alike); else it copies them.
kernel void barrier_in_conditional(global const int* in, global int* out, local int* tile, int flip) {
    const size_t lid = get_local_id(0);
    const size_t size = get_local_size(0);
    int value = in[get_global_id(0)];
    if (flip != 0) {
        tile[lid] = value;
        barrier(CLK_LOCAL_MEM_FENCE);
        value = tile[size - 1 - lid];
    }
    out[get_global_id(0)] = value;
}

// Values of several types and a private array, made before two barriers and read after
// them: out[gid] = gid * 3 + 0.5 * gid + (gid << 40 >> 40) + sum of private[i] (i * gid)
// + the float4's components + the neighbour's id.
kernel void live_across_barriers(global double* out, local uint* ids) {
    const size_t gid = get_global_id(0);
    const size_t lid = get_local_id(0);
    int i3 = (int)gid * 3;
    float half_id = 0.5f * (float)gid;
    ulong wide = ((ulong)gid << 40) >> 40;
    float4 v = (float4)(1.0f, 2.0f, 3.0f, 4.0f) * (float)lid;
    int priv[16];
    for (int i = 0; i < 16; ++i) {
        priv[i] = i * (int)gid;
    }
    ids[lid] = (uint)gid;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint neighbour = ids[(lid + 1) % get_local_size(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int priv_sum = 0;
    for (int i = 0; i < 16; ++i) {
        priv_sum += priv[i];
    }
    out[gid] = (double)i3 + (double)half_id + (double)wide + (double)priv_sum + (double)(v.x + v.y + v.z + v.w) +
               (double)neighbour;
}

// A helper with a barrier: the sum of the group's values (one per work-item, in
// `scratch`), every work-item getting it.
uint group_sum(local uint* scratch, uint value) {
    const size_t lid = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint sum = 0;
    const size_t count = get_local_size(0) * get_local_size(1) * get_local_size(2);
    for (size_t i = 0; i < count; ++i) {
        sum += scratch[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}

// In groups of up to three dimensions: each work-item's local and group ids after a
// barrier (they must be its own), and the group's sum of linear local ids, twice (the
// helper called in a loop). out[4 * gid_linear + 0..3] = local id x, y, z, sum.
kernel void ids_after_barrier(global uint* out, local uint* scratch) {
    const size_t gx = get_global_id(0), gy = get_global_id(1), gz = get_global_id(2);
    const size_t linear = gx + get_global_size(0) * (gy + get_global_size(1) * gz);
    const uint local_linear =
        (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
    uint sum = 0;
    for (int round = 0; round < 2; ++round) {
        sum += group_sum(scratch, local_linear);
    }
    out[4 * linear + 0] = (uint)get_local_id(0);
    out[4 * linear + 1] = (uint)get_local_id(1);
    out[4 * linear + 2] = (uint)get_local_id(2);
    out[4 * linear + 3] = sum;
}

// Only the work-items of the group's first half reach the barrier (undefined in OpenCL:
// the host neither hangs nor fails); every work-item writes gid + 1.
kernel void barrier_in_half(global uint* out) {
    const size_t lid = get_local_id(0);
    if (lid < get_local_size(0) / 2) {
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    out[get_global_id(0)] = (uint)get_global_id(0) + 1;
}
