// gpusched-opencl-probe: can this machine's OpenCL run a kernel at all?
//
// Validation runs every schedule on POCL. Where POCL itself cannot run (no
// /sys to size the device's memory: "Not enough memory to run on this
// device"; a missing ICD; no device), every schedule's build would fail to
// run alike, and blaming the schedules for it would be wrong. Validation runs
// this probe first, in a process of its own (a broken runtime may crash or
// hang), and reports a failure here once, as "not validated", rather than as
// a verdict on any schedule.
//
// It does what a Halide OpenCL pipeline does first: find a GPU-or-CPU device,
// create a context and queue, build a kernel from source, run it on a buffer
// and read the result back. Exit 0 and prints the device name on success;
// exit 1 with one line naming the failed step otherwise.

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int fail(const char *step, cl_int err, const std::string &extra = {}) {
    std::fprintf(stderr, "OpenCL %s failed (error %d)%s%s\n", step, static_cast<int>(err),
                 extra.empty() ? "" : ": ", extra.c_str());
    return 1;
}

const char *kSource =
    "__kernel void twice(__global int *a) { size_t i = get_global_id(0); a[i] = 2 * a[i] + 1; }";

} // namespace

int main() {
    cl_uint num_platforms = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
    if (err != CL_SUCCESS || num_platforms == 0)
        return fail("platform query (is an ICD such as pocl-opencl-icd installed?)", err);
    std::vector<cl_platform_id> platforms(num_platforms);
    clGetPlatformIDs(num_platforms, platforms.data(), nullptr);

    cl_device_id device = nullptr;
    for (cl_platform_id p : platforms) {
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) break;
        device = nullptr;
    }
    if (!device) return fail("device query (no device on any platform)", CL_DEVICE_NOT_FOUND);
    char name[256] = {0};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);

    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return fail("context creation", err, name);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
    if (err != CL_SUCCESS) return fail("queue creation", err, name);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, nullptr, &err);
    if (err != CL_SUCCESS) return fail("program creation", err, name);
    err = clBuildProgram(prog, 1, &device, nullptr, nullptr, nullptr);
    if (err != CL_SUCCESS) {
        char log[1024] = {0};
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, nullptr);
        return fail("kernel build", err, log);
    }
    cl_kernel kernel = clCreateKernel(prog, "twice", &err);
    if (err != CL_SUCCESS) return fail("kernel creation", err, name);

    constexpr size_t n = 64;
    std::vector<cl_int> data(n);
    for (size_t i = 0; i < n; ++i)
        data[i] = static_cast<cl_int>(i);
    cl_mem buf =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), data.data(), &err);
    if (err != CL_SUCCESS) return fail("buffer creation", err, name);
    clSetKernelArg(kernel, 0, sizeof(buf), &buf);
    size_t global = n;
    err = clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return fail("kernel launch", err, name);
    err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * sizeof(cl_int), data.data(), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return fail("result read-back", err, name);
    for (size_t i = 0; i < n; ++i) {
        if (data[i] != static_cast<cl_int>(2 * i + 1))
            return fail("kernel result check", CL_SUCCESS, "wrong values");
    }
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    std::printf("%s\n", name);
    return 0;
}
