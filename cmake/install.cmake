# cmake --install, the CMake package and the Debian package (docs/install.md).
#
# Layout (GNUInstallDirs, all relative to the prefix, so any prefix works):
#   bin/gpusched                                  the driver
#   <libdir>/gpusched/libgpusched_autoscheduler.so  the Halide plugin (gpusched::gpusched)
#   <libdir>/gpusched/libgpusched_output_runner.a   the validation runner's main()
#   <libdir>/gpusched/libgpusched_benchmark_runner.a the benchmark harness
#   <libdir>/gpusched/gpusched-opencl-probe       validation's OpenCL probe
#   <libdir>/gpusched/gpusched-host-target        prints this CPU's Halide target
#   <libdir>/gpusched/demo/demo_sharpen.generator the README's demo pipeline
#   <libdir>/cmake/gpusched/                      gpuschedConfig.cmake (+ version)
#   <datadir>/gpusched/weights/default.weights    the default cost-model weights
#                                                 (also embedded in the plugin and driver)
#   <datadir>/gpusched/examples/halide_project/   a CMake project using the package
#   <docdir>/                                     README.md and docs/
# The driver finds the <libdir>/gpusched pieces relative to itself
# (tuner/install_layout.h).
include(CMakePackageConfigHelpers)

foreach(_dir CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_DATADIR CMAKE_INSTALL_DOCDIR)
  if(IS_ABSOLUTE "${${_dir}}")
    message(FATAL_ERROR "${_dir} is absolute (${${_dir}}); gpusched's install is relocatable "
                        "and needs it relative to the prefix")
  endif()
endforeach()

set(GPUSCHED_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpusched)
set(GPUSCHED_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/gpusched)

install(TARGETS gpusched RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS gpusched_autoscheduler LIBRARY DESTINATION ${GPUSCHED_INSTALL_PKGLIBDIR})
install(TARGETS gpusched_output_runner gpusched_benchmark_runner ARCHIVE DESTINATION ${GPUSCHED_INSTALL_PKGLIBDIR})
install(TARGETS gpusched-opencl-probe gpusched-host-target RUNTIME DESTINATION ${GPUSCHED_INSTALL_PKGLIBDIR})
install(TARGETS demo_sharpen.generator RUNTIME DESTINATION ${GPUSCHED_INSTALL_PKGLIBDIR}/demo)
install(FILES ${PROJECT_SOURCE_DIR}/costmodel/weights/default.weights DESTINATION ${GPUSCHED_INSTALL_DATADIR}/weights)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/test/install/consumer/
        DESTINATION ${GPUSCHED_INSTALL_DATADIR}/examples/halide_project)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpuschedConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/cmake/gpuschedConfig.cmake
    INSTALL_DESTINATION ${GPUSCHED_INSTALL_CMAKEDIR}
    PATH_VARS CMAKE_INSTALL_BINDIR GPUSCHED_INSTALL_PKGLIBDIR GPUSCHED_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cmake/gpuschedConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmake/gpuschedConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cmake/gpuschedConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/gpuschedHelpers.cmake
        DESTINATION ${GPUSCHED_INSTALL_CMAKEDIR})

# cpack -G DEB: one package, gpusched_<version>_amd64.deb, installed under
# /usr. Shared-library dependencies come from dpkg-shlibdeps; the rest are
# what the driver runs at run time:
#   the Halide it was built with (libhalide14-0-dev on Debian 12,
#                      libhalide19-dev on 13, libhalide21-dev after: a plugin
#                      loads only into its own Halide): Halide's own plugins
#                      (baselines, validation's CPU reference), GenGen and the
#                      headers for users' generators, Halide's CMake helpers
#   g++                links the validation runner and benchmarks around each
#                      compiled pipeline (the driver runs c++ or $CXX)
# Recommended: POCL and ocl-icd-opencl-dev (validation without a GPU: Halide
# 14's runtime opens the unversioned libOpenCL.so, which only the -dev package
# has, unless the runner loads libOpenCL.so.1 first as main's f606744 does) and what find_package(Halide)
# needs in a user's CMake project (cmake, libpng-dev, libjpeg-dev).
set(CPACK_PACKAGE_NAME gpusched)
set(CPACK_PACKAGE_VENDOR "gpusched")
set(CPACK_PACKAGE_CONTACT "gpusched maintainers <gpusched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU autoscheduler (Anderson et al. 2021) for Halide ${GPUSCHED_HALIDE_VERSION}, and its tuning driver")
set(CPACK_PACKAGE_DESCRIPTION "gpusched finds CUDA schedules for Halide ${GPUSCHED_HALIDE_VERSION} pipelines: a Halide \
autoscheduler plugin for add_halide_library(... AUTOSCHEDULER gpusched::gpusched), and the gpusched \
driver (oneshot, tune, db, retrain) with ptxas spill checks and output validation on POCL.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(GPUSCHED_HALIDE_VERSION EQUAL 14)
  set(_halide_dev libhalide14-0-dev)
else()
  set(_halide_dev libhalide${GPUSCHED_HALIDE_VERSION}-dev)
endif()
math(EXPR _halide_next "${GPUSCHED_HALIDE_VERSION} + 1")
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "${_halide_dev} (>= ${GPUSCHED_HALIDE_VERSION}), ${_halide_dev} (<< ${_halide_next}), g++")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd, ocl-icd-opencl-dev, cmake (>= 3.22), make, libpng-dev, libjpeg-dev")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-cuda-toolkit")
set(CPACK_GENERATOR DEB)
include(CPack)
