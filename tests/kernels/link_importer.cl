// Built with -cl-std=CL2.0 (program-scope variables need it). Imports what
// link_exporter.cl exports; its kernels can be created once zeModuleDynamicLink linked it
// with a module exporting them.
extern int add_offset(int x);
extern int take_ticket(void);
extern int group_sum(local int* scratch, int v);
extern global int link_counter;
// A variable of this module's own: how many times `tickets` ran.
global int tickets_runs = 0;

// data[i] = add_offset(data[i]).
kernel void offset_all(global int* data) {
    const size_t i = get_global_id(0);
    data[i] = add_offset(data[i]);
}

// Two tickets, then the counter, which then goes up by 10 (one work-item).
kernel void tickets(global int* out) {
    tickets_runs += 1;
    out[0] = take_ticket();
    out[1] = take_ticket();
    out[2] = link_counter;
    link_counter += 10;
}

// out[i] = the sum of the global ids of the work-group of i.
kernel void sums(global int* out, local int* scratch) {
    const size_t i = get_global_id(0);
    out[i] = group_sum(scratch, (int)i);
}
