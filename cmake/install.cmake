# Install rules: the libraries as blockeigs::core, ::io, ::dense, ::spmm, ::solver
# (an interface over the solver's rooms, ::solver_base ... ::solver_plan)
# (and ::petsc where built), their public headers under include/blockeigs/
# with the paths the code uses, the apps, and a package config so that
#   find_package(blockeigs CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE blockeigs::solver)
# works, its dependencies found by blockeigsConfig.cmake. blockeigs::lapack
# is the BLAS/LAPACKE the solver was linked with. Helper targets (warnings,
# the apps' libraries, tests, benchmarks) are not exported.
include(CMakePackageConfigHelpers)

set(_blockeigs_libraries blockeigs_core blockeigs_io blockeigs_dense blockeigs_spmm ${BLOCKEIGS_SOLVER_ROOMS}
    blockeigs_solver blockeigs_lapack)
if(BLOCKEIGS_PETSC)
  list(APPEND _blockeigs_libraries blockeigs_petsc)
endif()
foreach(library IN LISTS _blockeigs_libraries)
  if(NOT library STREQUAL "blockeigs_lapack")
    string(REPLACE "blockeigs_" "" name ${library})
    set_target_properties(${library} PROPERTIES EXPORT_NAME ${name})
    add_library(blockeigs::${name} ALIAS ${library})
  endif()
endforeach()

install(TARGETS ${_blockeigs_libraries} EXPORT blockeigsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Every header of the library folders except the YAML reader's internals
# (config_yaml.hpp and matrix_section.hpp need yaml-cpp, a private dependency)
# and device-code headers (.cuh), which only our .cu files include.
set(_blockeigs_header_excludes PATTERN "config_yaml.hpp" EXCLUDE PATTERN "matrix_section.hpp" EXCLUDE)
if(NOT BLOCKEIGS_PETSC)
  list(APPEND _blockeigs_header_excludes PATTERN "petsc" EXCLUDE)
endif()
install(DIRECTORY core io dense spmm solver
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blockeigs
        FILES_MATCHING PATTERN "*.hpp" ${_blockeigs_header_excludes})

set(_blockeigs_apps block-eigs block-cg mtx2h5)
if(BLOCKEIGS_BENCHES)
  list(APPEND _blockeigs_apps spmm-bench)
endif()
if(BLOCKEIGS_PETSC)
  list(APPEND _blockeigs_apps petsc-example)
endif()
install(TARGETS ${_blockeigs_apps} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/blockeigs/configs)

set(_blockeigs_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/blockeigs)
install(EXPORT blockeigsTargets NAMESPACE blockeigs:: DESTINATION ${_blockeigs_cmake_dir})
configure_package_config_file(cmake/blockeigsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/blockeigsConfig.cmake
  INSTALL_DESTINATION ${_blockeigs_cmake_dir})
# Before 1.0 a minor release may change the API: only 0.1.x satisfies 0.1.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/blockeigsConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/blockeigsConfig.cmake ${PROJECT_BINARY_DIR}/blockeigsConfigVersion.cmake
        DESTINATION ${_blockeigs_cmake_dir})
