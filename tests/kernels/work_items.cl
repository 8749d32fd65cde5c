// Every work-item function, written per work-item: 16 values at the item's linear
// global index (x fastest).
kernel void work_item_ids(global ulong* out) {
    const size_t gx = get_global_id(0) - get_global_offset(0);
    const size_t gy = get_global_id(1) - get_global_offset(1);
    const size_t gz = get_global_id(2) - get_global_offset(2);
    const size_t linear = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
    global ulong* o = out + linear * 16;
    o[0] = get_global_id(0);
    o[1] = get_global_id(1);
    o[2] = get_global_id(2);
    o[3] = get_local_id(0);
    o[4] = get_local_id(1);
    o[5] = get_local_id(2);
    o[6] = get_group_id(0);
    o[7] = get_group_id(1);
    o[8] = get_group_id(2);
    o[9] = get_local_size(0) * 10000 + get_local_size(1) * 100 + get_local_size(2);
    o[10] = get_num_groups(0) * 10000 + get_num_groups(1) * 100 + get_num_groups(2);
    o[11] = get_global_size(0) * 10000 + get_global_size(1) * 100 + get_global_size(2);
    o[12] = get_global_offset(0) * 10000 + get_global_offset(1) * 100 + get_global_offset(2);
    o[13] = get_work_dim();
    o[14] = get_local_size(0) * get_num_groups(0);
    o[15] = get_group_id(0) * get_local_size(0) + get_local_id(0) + get_global_offset(0);
}
