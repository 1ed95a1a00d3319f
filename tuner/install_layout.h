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

// The directory of the running executable (/proc/self/exe), empty if unknown.
std::string running_executable_dir();

// <prefix>/<libdir>/gpusched as seen from the running executable, when it is
// an installed gpusched; a path that need not exist otherwise.
std::string installed_pkglib_dir();

} // namespace gpusched
