# WEFT_SANITIZE: build everything (libweft, plugins, tools, tests) with GCC's or clang's sanitizers
# (docs/reliability.md, "Sanitizers"). "" is off; "address,undefined" (ASan + UBSan, LeakSanitizer included)
# or "thread" (TSan). ASan and TSan cannot share a process, so they need separate trees:
#   cmake -S . -B build-asan -DWEFT_SANITIZE=address,undefined && cmake --build build-asan -j2
#   ctest --test-dir build-asan -j2 --output-on-failure
# In such a tree ctest itself sets the runtimes' options (sanitizer_env.cmake below, from
# tests/sanitizers/), so the ranks mpirun starts inherit them; tests/sanitizers/run_sanitized.sh builds a
# tree and runs the suite in it (the CTest entry sanitizers_asan).
set(WEFT_SANITIZE "" CACHE STRING "Sanitizers for every target: empty (off), address,undefined, or thread")

if(NOT WEFT_SANITIZE)
  return()
endif()
if(WEFT_SANITIZE MATCHES "thread" AND WEFT_SANITIZE MATCHES "address|leak")
  message(FATAL_ERROR "WEFT_SANITIZE=${WEFT_SANITIZE}: thread cannot be combined with address or leak")
endif()

# Frame pointers for usable stacks in reports; every UBSan report is fatal, so that a test fails on it.
set(WEFT_SANITIZE_FLAGS -fsanitize=${WEFT_SANITIZE} -fno-omit-frame-pointer)
if(WEFT_SANITIZE MATCHES "undefined")
  list(APPEND WEFT_SANITIZE_FLAGS -fno-sanitize-recover=undefined)
endif()

# A compiler without the runtime fails here, at configure time, rather than at the first link.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "${WEFT_SANITIZE_FLAGS}")
list(JOIN CMAKE_REQUIRED_FLAGS " " CMAKE_REQUIRED_FLAGS)
set(CMAKE_REQUIRED_LINK_OPTIONS ${WEFT_SANITIZE_FLAGS})
check_cxx_source_compiles("int main() { return 0; }" WEFT_SANITIZE_LINKS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT WEFT_SANITIZE_LINKS)
  message(FATAL_ERROR "WEFT_SANITIZE=${WEFT_SANITIZE}: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=${WEFT_SANITIZE} "
    "(Debian: the sanitizer runtimes come with gcc, libasan8/libubsan1/libtsan2)")
endif()
message(STATUS "WEFT_SANITIZE: ${WEFT_SANITIZE_FLAGS}")

add_compile_options(${WEFT_SANITIZE_FLAGS})
add_link_options(${WEFT_SANITIZE_FLAGS})

# The runtimes' options and suppressions, for every process a test starts: included by ctest when it reads
# the tree's tests (TEST_INCLUDE_FILES), it sets them in ctest's own environment, which tests and the ranks
# mpirun starts inherit. Options already in the environment win.
set(WEFT_SANITIZER_SUPP_DIR ${PROJECT_SOURCE_DIR}/tests/sanitizers)
configure_file(${PROJECT_SOURCE_DIR}/tests/sanitizers/sanitizer_env.cmake.in ${CMAKE_BINARY_DIR}/sanitizer_env.cmake @ONLY)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_BINARY_DIR}/sanitizer_env.cmake)
