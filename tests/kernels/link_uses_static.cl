// Built with -cl-std=CL2.0 (program-scope variables need it). Imports link_exporter.cl's
// bump_hidden, which uses a static variable of its module: a link of it fails, naming the
// variable.
extern int bump_hidden(void);

kernel void calls_hidden(global int* out) { out[0] = bump_hidden(); }
