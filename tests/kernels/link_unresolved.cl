// Built with -cl-std=CL2.0 (program-scope variables need it). Imports a function and a
// variable that no module of the tests exports: a link of it fails and names them.
extern int not_exported_anywhere(int x);
extern global int no_such_variable;

kernel void calls_missing(global int* out) { out[0] = not_exported_anywhere(no_such_variable); }
