# Official LibTorch >= 2.5 exports its own copies of libstdc++ symbols (std::filesystem among
# them; PyTorch issue 133437). Under --as-needed (Ubuntu's default) an executable can end up
# with no libstdc++.so.6 in NEEDED, its std:: references unversioned and bound to libtorch's
# copies (std::filesystem::remove_all then jumps to address 0). Linking the shared libstdc++
# first and always makes every such reference a versioned one into libstdc++, for every
# executable here. It is named by its path: `-lstdc++` can find a static libstdc++.a first (a
# GCC under /opt/gcc on a GPU machine did: linked ahead of the objects it pulled in nothing, and
# every test that removed a folder crashed). tests/check_linkage.sh (ctest BuildCheck.Linkage)
# inspects each built executable for it; tests/check_linkage_static_first.sh (ctest
# BuildCheck.LinkageWithAStaticLibstdcxxFirst) rebuilds that toolchain's situation;
# scripts/linkage_probe.sh shows what a toolchain does.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                  OUTPUT_VARIABLE LEROBOT_LIBSTDCXX OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _stdcxx_rc)
  if(NOT _stdcxx_rc EQUAL 0 OR NOT IS_ABSOLUTE "${LEROBOT_LIBSTDCXX}" OR NOT EXISTS "${LEROBOT_LIBSTDCXX}")
    set(LEROBOT_LIBSTDCXX "-lstdc++")  # the compiler does not know the file: let the linker search
  endif()
  add_link_options("LINKER:--push-state,--no-as-needed,${LEROBOT_LIBSTDCXX},--pop-state")
endif()
