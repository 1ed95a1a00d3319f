# Group B of the paper's application suite (Anderson et al. 2021, section 6):
# unsharp mask, interpolate, conv layer, SGEMM, IIR blur, BGU, depthwise-
# separable conv and learned demosaic. Each app is one Halide 14 generator
# executable, <app>.generator, registered under the app's snake_case name;
# the driver runs it as a subprocess (see docs/apps/<app>.md). Tests that
# build them ahead of time live in test/apps_groupB/.

set(GPUSCHED_APPS_GROUPB
    unsharp_mask
    interpolate
    conv_layer
    sgemm
    iir_blur
    bgu
    depthwise_separable_conv
    learned_demosaic)

foreach(_app IN LISTS GPUSCHED_APPS_GROUPB)
  add_halide_generator(${_app}.generator
                       SOURCES ${CMAKE_CURRENT_LIST_DIR}/${_app}/${_app}_generator.cpp)
  target_link_libraries(${_app}.generator PRIVATE gpusched_warnings)
endforeach()
