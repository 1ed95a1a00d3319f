# What differs between the Halide releases gpusched builds against, on the
# CMake side (the C++ side is core/halide_compat.h). Included once Halide is
# found; sets:
#   GPUSCHED_HALIDE_VERSION      the major version found (14, 19 or 21)
#   GPUSCHED_HALIDE_PLUGIN_DIR   Halide's own autoscheduler plugins
#   GPUSCHED_HALIDE_SRC_DIR      RunGenMain.cpp and the tool headers
#   GPUSCHED_GENGEN              what a generator links for its main():
#                                Halide 14 ships GenGen.cpp as a source,
#                                Halide 16 and later a static library
#   GPUSCHED_HALIDE_INCLUDE_DIR  Halide.h's folder (Halide 19 exports its
#                                headers as a file set, so the target's
#                                INTERFACE_INCLUDE_DIRECTORIES is empty)
#   GPUSCHED_HALIDE_PROTOCOL     how a generator is told to use a plugin:
#                                "14" (-s NAME auto_schedule=true) or
#                                "16" (autoscheduler=NAME, options as
#                                autoscheduler.KEY=VALUE); also a compile
#                                definition everywhere, for
#                                tuner/generate/generator_protocol.h

set(GPUSCHED_HALIDE_VERSION ${Halide_VERSION_MAJOR} CACHE STRING
    "Halide major version to build against (14, 19 or 21; empty: the newest installed)" FORCE)
if(NOT GPUSCHED_HALIDE_VERSION IN_LIST GPUSCHED_SUPPORTED_HALIDE_VERSIONS)
  message(FATAL_ERROR "Halide ${Halide_VERSION} found at ${Halide_DIR}: gpusched supports Halide "
                      "${GPUSCHED_SUPPORTED_HALIDE_VERSIONS}")
endif()
message(STATUS "gpusched: Halide ${Halide_VERSION} (${Halide_DIR})")

set(_multiarch_lib /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
set(GPUSCHED_HALIDE_PLUGIN_DIR "${_multiarch_lib}/halide${GPUSCHED_HALIDE_VERSION}" CACHE PATH
    "Where Halide's own autoscheduler plugins live")
set(GPUSCHED_HALIDE_SRC_DIR "/usr/src/halide${GPUSCHED_HALIDE_VERSION}" CACHE PATH
    "Where Halide's RunGenMain.cpp (and, for Halide 14, GenGen.cpp) live")
find_path(GPUSCHED_HALIDE_INCLUDE_DIR Halide.h
          HINTS /usr/include/halide${GPUSCHED_HALIDE_VERSION} REQUIRED NO_DEFAULT_PATH)

if(GPUSCHED_HALIDE_VERSION EQUAL 14)
  set(GPUSCHED_GENGEN "${GPUSCHED_HALIDE_SRC_DIR}/GenGen.cpp" CACHE FILEPATH "Halide's generator main")
  set(GPUSCHED_HALIDE_PROTOCOL 14)
else()
  find_library(GPUSCHED_GENGEN NAMES Halide_GenGen${GPUSCHED_HALIDE_VERSION} Halide_GenGen
               HINTS ${_multiarch_lib} REQUIRED)
  set(GPUSCHED_HALIDE_PROTOCOL 16)
endif()
if(NOT EXISTS "${GPUSCHED_GENGEN}")
  message(FATAL_ERROR "Halide's generator main (${GPUSCHED_GENGEN}) is missing")
endif()
add_compile_definitions(GPUSCHED_HALIDE_PROTOCOL=${GPUSCHED_HALIDE_PROTOCOL})
