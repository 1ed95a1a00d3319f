// Prints this machine's Halide CPU target (tuner/host_target.h). The
// configure step compiles and runs it with try_run, which takes one source
// file in CMake 3.22, hence the included .cpp: the build's own CPU libraries
// then use exactly the target gpusched uses at run time.
#include "tuner/host_target.cpp"

#include <iostream>

int main() {
    std::cout << gpusched::host_cpu_target();
    return 0;
}
