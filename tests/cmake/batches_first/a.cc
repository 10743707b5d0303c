// One of three files batched by tests/cmake/batches_first/CMakeLists.txt.
int batches_first_a() { return 0; }
