// Built with -cl-std=CL2.0 (program-scope variables need it). Exports for
// zeModuleDynamicLink (link_importer.cl imports them): functions that use work-item
// functions, barriers and a program-scope variable, and a function that uses a static
// variable, which no other module reaches (link_uses_static.cl).
global int link_counter = 100;
static global int hidden_count = 0;

// x + 1000 + the calling work-item's global id.
int add_offset(int x) { return x + 1000 + (int)get_global_id(0); }

// The counter before the call; the counter goes up by one (call it from one work-item).
int take_ticket(void) {
    const int ticket = link_counter;
    link_counter = ticket + 1;
    return ticket;
}

// The sum of every work-item's `v` in the calling work-group, through `scratch` (one int
// per work-item) and barriers.
int group_sum(local int* scratch, int v) {
    const size_t i = get_local_id(0);
    scratch[i] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int sum = 0;
    for (size_t j = 0; j < get_local_size(0); ++j) sum += scratch[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}

// How many times it was called in this module.
int bump_hidden(void) { return ++hidden_count; }

// out[0] = the counter, as this module sees it.
kernel void read_counter(global int* out) { out[0] = link_counter; }
