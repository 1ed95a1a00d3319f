# gpusched_configure_generator: gpusched's search config (GPU profile, beam
# size, ...) for add_halide_library in a Halide user's CMake build
# (docs/install.md).
#
#   gpusched_configure_generator(<name> FROM <generator-target>
#                                [CONFIG_FILE <file.json>]   # any keys of docs/search.md
#                                [GPU <name>]                # gpu_profile: h100 h200 a100 v100
#                                [BEAM_SIZE <n>] [PASSES <n>] [SEED <n>]
#                                [RECORD_PATH <file.json>])  # the plugin's decision record
#   add_halide_library(my_app FROM <name> GENERATOR <generator name> ...
#                      AUTOSCHEDULER gpusched::gpusched)
#
# <name> is a new executable target: <generator-target> run with that config.
# Without one, the plugin uses its defaults (H100 profile, beam 32 x 5 passes,
# seed 0), so plain add_halide_library(... FROM <generator-target> ...) works.
#
# Why a new target: the plugin reads its config from the file named by the
# environment variable GPUSCHED_CONFIG, and Halide 14's add_halide_library
# runs the FROM target with no way to set its environment (a target's
# CROSSCOMPILING_EMULATOR is not applied to custom commands unless
# cross-compiling). So <name> is an IMPORTED executable whose file is a
# two-line shell script in the build tree,
#   GPUSCHED_CONFIG=<build>/gpusched/<name>-<hash>.json exec <generator> "$@"
# rewritten whenever the generator is rebuilt, so add_halide_library re-runs
# the search when the generator changes, and named by a hash of the config, so
# it re-runs when the config changes. CONFIG_FILE is read at configure time
# (editing it re-runs CMake); the keyword values are laid over it.
function(gpusched_configure_generator name)
  cmake_parse_arguments(ARG "" "FROM;CONFIG_FILE;GPU;BEAM_SIZE;PASSES;SEED;RECORD_PATH" "" ${ARGN})
  set(fn "gpusched_configure_generator(${name})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${fn}: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_FROM OR NOT TARGET "${ARG_FROM}")
    message(FATAL_ERROR "${fn}: FROM must name a generator target (add_halide_generator), got '${ARG_FROM}'")
  endif()
  if(TARGET "${name}")
    message(FATAL_ERROR "${fn}: a target named ${name} already exists")
  endif()

  set(config "{}")
  if(ARG_CONFIG_FILE)
    get_filename_component(ARG_CONFIG_FILE "${ARG_CONFIG_FILE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${ARG_CONFIG_FILE}")
      message(FATAL_ERROR "${fn}: CONFIG_FILE ${ARG_CONFIG_FILE} does not exist")
    endif()
    file(READ "${ARG_CONFIG_FILE}" config)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${ARG_CONFIG_FILE}")
    string(JSON type ERROR_VARIABLE err TYPE "${config}")
    if(err OR NOT type STREQUAL "OBJECT")
      message(FATAL_ERROR "${fn}: ${ARG_CONFIG_FILE} is not a JSON object ${err}")
    endif()
  endif()
  if(DEFINED ARG_GPU)
    string(JSON config SET "${config}" gpu_profile "\"${ARG_GPU}\"")
  endif()
  foreach(key BEAM_SIZE PASSES SEED)
    if(DEFINED ARG_${key})
      if(NOT ARG_${key} MATCHES "^[0-9]+$")
        message(FATAL_ERROR "${fn}: ${key} must be a non-negative integer, got '${ARG_${key}}'")
      endif()
      string(TOLOWER ${key} json_key)
      string(JSON config SET "${config}" ${json_key} ${ARG_${key}})
    endif()
  endforeach()
  if(DEFINED ARG_RECORD_PATH)
    get_filename_component(ARG_RECORD_PATH "${ARG_RECORD_PATH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    string(JSON config SET "${config}" record_path "\"${ARG_RECORD_PATH}\"")
  endif()

  string(SHA256 hash "${config}")
  string(SUBSTRING "${hash}" 0 12 hash)
  string(MAKE_C_IDENTIFIER "${name}" file_name)
  set(dir "${CMAKE_BINARY_DIR}/gpusched")
  set(config_file "${dir}/${file_name}-${hash}.json")
  set(script "${dir}/${file_name}-${hash}.sh")
  file(WRITE "${config_file}" "${config}\n")
  file(GENERATE OUTPUT "${script}.in"
       CONTENT "#!/bin/sh\n# ${ARG_FROM} with gpusched's config ${config_file} (gpusched_configure_generator)\nGPUSCHED_CONFIG='${config_file}' exec '$<TARGET_FILE:${ARG_FROM}>' \"$@\"\n"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  add_custom_command(OUTPUT "${script}"
                     COMMAND "${CMAKE_COMMAND}" -E copy "${script}.in" "${script}"
                     COMMAND "${CMAKE_COMMAND}" -E touch "${script}"
                     DEPENDS "${ARG_FROM}" "${script}.in"
                     COMMENT "gpusched config for ${ARG_FROM}: ${config}"
                     VERBATIM)
  add_custom_target("${name}.script" DEPENDS "${script}")
  add_executable("${name}" IMPORTED)
  set_target_properties("${name}" PROPERTIES IMPORTED_LOCATION "${script}")
  add_dependencies("${name}" "${name}.script")
endfunction()
