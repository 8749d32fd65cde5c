// A kernel that does nothing: what a launch costs by itself.
kernel void empty(void) {}
