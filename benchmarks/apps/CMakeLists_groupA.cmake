# Group A of the benchmark suite (Anderson et al. 2021, sec. 6): one Halide generator per app,
# each an executable at ${CMAKE_CURRENT_BINARY_DIR}/<app>.generator (build/benchmarks/apps/ when
# included from benchmarks/apps/CMakeLists.txt) whose registered generator name is <app>. The
# driver runs them as subprocesses; test/apps_groupA/ builds CPU libraries from them.
set(GPUSCHED_APPS_GROUPA
    bilateral_grid
    local_laplacian
    nl_means
    lens_blur
    camera_pipe
    stencil_chain
    harris
    histogram_equalize
    max_filter
    CACHE INTERNAL "Group-A benchmark apps (generator names)")

foreach(_app IN LISTS GPUSCHED_APPS_GROUPA)
  add_halide_generator(${_app}.generator
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/${_app}/${_app}_generator.cpp
                               ${CMAKE_CURRENT_LIST_DIR}/groupA_common/schedule_helpers.h)
  # Halide.h is a system header; our own code gets the project's warnings.
  target_link_libraries(${_app}.generator PRIVATE gpusched_warnings)
endforeach()
