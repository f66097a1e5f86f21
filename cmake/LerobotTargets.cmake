# Helpers that give every target the same warnings, include paths and precompiled headers.
set(LEROBOT_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare)

# lerobot_library(NAME SOURCES ... DEPS ... [TORCH]) : one static library per layer.
function(lerobot_library name)
  cmake_parse_arguments(A "TORCH" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(${name} PRIVATE ${LEROBOT_WARNINGS})
  target_link_libraries(${name} PUBLIC ${A_DEPS})
  if(A_TORCH)
    target_link_libraries(${name} PUBLIC ${TORCH_LIBRARIES})
    lerobot_use_torch_pch(${name})
  endif()
endfunction()

# All torch-using targets share one precompiled header (built once, in lerobot_torch_pch).
function(lerobot_use_torch_pch target)
  if(NOT TARGET lerobot_torch_pch)
    add_library(lerobot_torch_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
    target_link_libraries(lerobot_torch_pch PUBLIC ${TORCH_LIBRARIES})
    target_precompile_headers(lerobot_torch_pch PRIVATE <torch/torch.h>)
  endif()
  target_precompile_headers(${target} REUSE_FROM lerobot_torch_pch)
endfunction()

# lerobot_test(NAME SOURCES ... DEPS ...) : a GoogleTest binary registered with ctest.
function(lerobot_test name)
  cmake_parse_arguments(A "TORCH" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES} ${PROJECT_SOURCE_DIR}/tests/support/run_command.cpp
                 ${PROJECT_SOURCE_DIR}/tests/support/process_temp_dir.cpp)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_options(${name} PRIVATE ${LEROBOT_WARNINGS})
  target_compile_definitions(${name} PRIVATE
    LEROBOT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LEROBOT_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures"
    LEROBOT_CLI="$<TARGET_FILE:lerobot-cpp>")
  target_link_libraries(${name} PRIVATE ${A_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  if(A_TORCH)
    lerobot_use_torch_pch(${name})
  endif()
  # Test sources compile in batches (one translation unit each): a test file's own code is small
  # next to the LibTorch templates every unit instantiates again, so batching them cuts the build
  # on CI's 2 cores. Editing one test recompiles its batch; -DLEROBOT_UNITY_TESTS=OFF turns it off.
  if(LEROBOT_UNITY_TESTS)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${LEROBOT_UNITY_BATCH})
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  include(GoogleTest)
  # An unset --policy.device is the CPU in tests (the resolver's LEROBOT_CPP_DEFAULT_DEVICE): the
  # GPU tests name CUDA themselves, and on a GPU machine the CPU checks stay on the CPU.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120
    PROPERTIES TIMEOUT ${A_TIMEOUT} ENVIRONMENT "LEROBOT_CPP_DEFAULT_DEVICE=cpu" LABELS "${A_LABELS}")
endfunction()

# lerobot_layer(NAME DIR [TORCH] DEPS ...): a library of every .cpp under DIR (globbed, so adding
# a file needs no CMake edit), excluding files listed in EXCLUDE.
function(lerobot_layer name dir)
  cmake_parse_arguments(A "TORCH" "" "DEPS;EXCLUDE" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  foreach(x ${A_EXCLUDE})
    list(FILTER _srcs EXCLUDE REGEX "${x}")
  endforeach()
  if(NOT _srcs)
    message(STATUS "${name}: no sources yet")
    return()
  endif()
  if(A_TORCH)
    lerobot_library(${name} TORCH SOURCES ${_srcs} DEPS ${A_DEPS})
  else()
    lerobot_library(${name} SOURCES ${_srcs} DEPS ${A_DEPS})
  endif()
endfunction()

# lerobot_layer_tests(NAME DIR DEPS ...): one GoogleTest binary of every test_*.cpp under DIR.
function(lerobot_layer_tests name dir)
  cmake_parse_arguments(A "TORCH" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${dir}/test_*.cpp ${dir}/*_helpers.cpp)
  if(NOT _srcs)
    message(STATUS "${name}: no test sources yet")
    return()
  endif()
  if(A_TORCH)
    lerobot_test(${name} TORCH SOURCES ${_srcs} DEPS ${A_DEPS})
  else()
    lerobot_test(${name} SOURCES ${_srcs} DEPS ${A_DEPS})
  endif()
endfunction()
