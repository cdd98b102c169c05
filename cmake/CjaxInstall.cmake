# Installing cjax: headers under include/cjax/, the static libraries, the `cjax` CLI, a CMake
# package (find_package(cjax) -> cjax::cjax, cjax::plugin) and a pkg-config file.
#
# Public headers include each other as "cjax/array.h", so the installed include root is
# include/cjax/ and the umbrella header is include/cjax/cjax.h (<cjax/cjax.h> from include/); both
# directories go on the consumer's include path.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CJAX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cjax)
set(CJAX_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/cjax)

# cjax::cjax: every exported library. cjax::plugin: headers only; a plugin's cjax symbols resolve
# to the `cjax` executable that loads it, so there is one copy of the primitive tables.
add_library(cjax_all INTERFACE)
add_library(cjax::cjax ALIAS cjax_all)
set_target_properties(cjax_all PROPERTIES EXPORT_NAME cjax)
add_library(cjax_plugin_api INTERFACE)
add_library(cjax::plugin ALIAS cjax_plugin_api)
set_target_properties(cjax_plugin_api PROPERTIES EXPORT_NAME plugin)
foreach(t cjax_all cjax_plugin_api)
  target_include_directories(${t} INTERFACE
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}> $<BUILD_INTERFACE:${CJAX_GENERATED_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}> $<INSTALL_INTERFACE:${CJAX_INSTALL_INCLUDEDIR}>)
  target_compile_features(${t} INTERFACE cxx_std_20)
endforeach()
target_link_libraries(cjax_plugin_api INTERFACE fmt::fmt)
install(TARGETS cjax_all cjax_plugin_api EXPORT cjaxTargets)
set(CJAX_PC_LIBS "" CACHE INTERNAL "")
set(CJAX_PC_SYSTEM_LIBS "" CACHE INTERNAL "")

# cjax_export(TARGET [HEADERS DIR...] [FILES HEADER...]): installs a library into the package (as
# cjax::<name without the cjax_ prefix>), makes cjax::cjax link it, and installs the *.h of each
# DIR (relative to the source root, not recursive) and each single HEADER. One line per library;
# list a library after the libraries it depends on.
function(cjax_export target)
  cmake_parse_arguments(ARG "" "" "HEADERS;FILES" ${ARGN})
  string(REGEX REPLACE "^cjax_" "" short ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${short})
  install(TARGETS ${target} EXPORT cjaxTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  target_link_libraries(cjax_all INTERFACE ${target})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")  # static libraries link users first: prepend
    set(CJAX_PC_LIBS "-l${target} ${CJAX_PC_LIBS}" CACHE INTERNAL "")
    # System libraries it links (a path or a bare name, not a target) go last in pkg-config.
    get_target_property(deps ${target} LINK_LIBRARIES)
    foreach(dep ${deps})
      if(TARGET ${dep} OR dep MATCHES "^\\$<" OR dep MATCHES "^cjax")
        continue()
      endif()
      get_filename_component(dep ${dep} NAME_WE)
      string(REGEX REPLACE "^lib" "" dep ${dep})
      set(CJAX_PC_SYSTEM_LIBS "${CJAX_PC_SYSTEM_LIBS} -l${dep}" CACHE INTERNAL "")
    endforeach()
  endif()
  foreach(file ${ARG_FILES})
    get_filename_component(dir ${file} DIRECTORY)
    install(FILES ${CMAKE_SOURCE_DIR}/${file} DESTINATION ${CJAX_INSTALL_INCLUDEDIR}/${dir})
  endforeach()
  foreach(dir ${ARG_HEADERS})
    file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.h)
    install(FILES ${headers} DESTINATION ${CJAX_INSTALL_INCLUDEDIR}/${dir})
  endforeach()
endfunction()

# Writes the package files; call after the last cjax_export. CJAX_PACKAGE_DEPENDENCIES may hold
# extra find_dependency() lines for cjaxConfig.cmake (a back end's own packages).
function(cjax_install_package)
  install(FILES ${CMAKE_SOURCE_DIR}/cjax/cjax.h ${CJAX_GENERATED_DIR}/cjax/version.h
    DESTINATION ${CJAX_INSTALL_INCLUDEDIR})
  install(EXPORT cjaxTargets NAMESPACE cjax:: DESTINATION ${CJAX_INSTALL_CMAKEDIR})
  set(CJAX_EXTRA_DEPENDENCIES "${CJAX_PACKAGE_DEPENDENCIES}")
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cjaxConfig.cmake.in
    ${CMAKE_BINARY_DIR}/cjaxConfig.cmake INSTALL_DESTINATION ${CJAX_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/cjaxConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/cjaxConfig.cmake ${CMAKE_BINARY_DIR}/cjaxConfigVersion.cmake
    DESTINATION ${CJAX_INSTALL_CMAKEDIR})
  string(STRIP "${CJAX_PC_LIBS} ${CJAX_PC_SYSTEM_LIBS}" CJAX_PC_LIBS)
  file(RELATIVE_PATH CJAX_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/cjax.pc.in ${CMAKE_BINARY_DIR}/cjax.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/cjax.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
