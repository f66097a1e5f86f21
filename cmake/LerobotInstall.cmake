# `cmake --install build --prefix P`: besides lerobot-cpp (apps/), the C++ deployment package: the
# static libraries and headers of the InferencePolicy API (lerobot/policies/inference.h), with the
# Hub client that fetches a policy by its Hub id, and a CMake package, so a robot's own program finds it with `find_package(lerobot_cpp)` and links
# `lerobot_cpp::inference` (examples/robot_loop; tests/install checks that an installed tree builds
# and runs it).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LEROBOT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lerobot_cpp)
install(TARGETS lerobot_common lerobot_common_torch lerobot_hub lerobot_policies EXPORT lerobot_cppTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The headers of those layers (inference.h includes optim/training_preset.h, a header only); hub/
# resolves a policy given by its Hub id (hub/pretrained.h), as LeRobot's --policy.path=org/name.
foreach(dir common hub policies optim)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/lerobot/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lerobot
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT lerobot_cppTargets NAMESPACE lerobot_cpp:: DESTINATION ${LEROBOT_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lerobot_cppConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/lerobot_cppConfig.cmake
                              INSTALL_DESTINATION ${LEROBOT_INSTALL_CMAKEDIR})
install(FILES ${PROJECT_BINARY_DIR}/lerobot_cppConfig.cmake DESTINATION ${LEROBOT_INSTALL_CMAKEDIR})
