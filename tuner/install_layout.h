#pragma once
// Where an installed gpusched keeps its pieces, relative to the running
// binary, so that an install prefix anywhere works (/usr, /opt/gpusched,
// $HOME/.local, a .deb, a temporary prefix in a test). The layout is the
// one `cmake --install` writes (GNUInstallDirs):
//
//   <prefix>/<bindir>/gpusched                      the driver
//   <prefix>/<libdir>/gpusched/                     the plugin, the runner archives,
//                                                   the OpenCL probe, the host-target tool,
//                                                   demo/ (the README's demo generator)
//   <prefix>/<datadir>/gpusched/                    default weights, example CMake project
//   <prefix>/<libdir>/cmake/gpusched/               the CMake package (find_package(gpusched))
//
// The relative path from bindir to <libdir>/gpusched is fixed when gpusched
// is configured (GPUSCHED_INSTALL_PKGLIBDIR_FROM_BINDIR); the prefix is not.

#include <string>

namespace gpusched {

// The running gpusched binary: /proc/self/exe, or, where the bundle's
// launcher started it through the bundle's dynamic loader (which
// /proc/self/exe then names; tuner/bundle_c_library.h), the binary it
// named in GPUSCHED_EXECUTABLE. Empty if unknown.
std::string running_executable();

// The directory of running_executable(), empty if unknown.
std::string running_executable_dir();

// The command that starts this gpusched again, on this machine or another
// (a Slurm worker): the bundle's launcher where one started it
// (GPUSCHED_LAUNCHER), which chooses the C library again for that node;
// else the running executable.
std::string self_command();

// <prefix>/<libdir>/gpusched as seen from the running executable, when it is
// an installed gpusched; a path that need not exist otherwise.
std::string installed_pkglib_dir();

} // namespace gpusched
