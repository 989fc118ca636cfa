# Helpers every tests/ folder uses to register Check suites and fuzz targets with CTest.

# The cluster secret every test's processes and tools use (MC_SECRET_FILE in each test's
# environment): made once per build directory, mode 0600, never committed.
set(MC_TEST_SECRET_FILE ${CMAKE_BINARY_DIR}/tests-cluster.secret)
if(NOT EXISTS ${MC_TEST_SECRET_FILE})
  string(RANDOM LENGTH 64 ALPHABET 0123456789abcdef mc_test_secret)
  file(WRITE ${MC_TEST_SECRET_FILE} "${mc_test_secret}\n")
endif()
file(CHMOD ${MC_TEST_SECRET_FILE} FILE_PERMISSIONS OWNER_READ OWNER_WRITE)

# mc_add_check_test(<name> SOURCES <files...> LIBS <targets...> [TIMEOUT <s>] [LABELS <l...>])
# Builds build/bin/<name> linked with Check and registers it as a CTest test.
function(mc_add_check_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} PkgConfig::CHECK)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/support)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  # CK_DEFAULT_TIMEOUT: per-test-case limit inside Check (sanitizers slow things down).
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "CK_DEFAULT_TIMEOUT=120;MC_BIN_DIR=${CMAKE_BINARY_DIR}/bin;MC_SOURCE_DIR=${CMAKE_SOURCE_DIR};MC_SECRET_FILE=${MC_TEST_SECRET_FILE}")
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# mc_add_fuzz_target(<name> SOURCES <files...> LIBS <targets...>)
# Only with MC_FUZZ: builds a libFuzzer binary and runs it for MC_FUZZ_SECONDS as a test.
function(mc_add_fuzz_target name)
  if(NOT MC_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus)
  file(MAKE_DIRECTORY ${corpus})
  add_test(NAME ${name}
    COMMAND ${name} -max_total_time=${MC_FUZZ_SECONDS} -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}- ${corpus})
  math(EXPR fuzz_timeout "${MC_FUZZ_SECONDS} * 3 + 60")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${fuzz_timeout} LABELS fuzz)
endfunction()
