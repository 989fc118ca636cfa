# Every third-party dependency is found through pkg-config. A missing one stops the
# configure step with a single line naming the Debian package that provides it.
find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "missing pkg-config: install Debian package pkg-config")
endif()

# mc_require_pkg(<prefix> <pkg-config module> <Debian package>) -> PkgConfig::<prefix>
function(mc_require_pkg prefix module debpkg)
  pkg_check_modules(${prefix} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${prefix}_FOUND)
    message(FATAL_ERROR "missing ${module}: install Debian package ${debpkg}")
  endif()
endfunction()

mc_require_pkg(LIBEVENT   libevent       libevent-dev)
mc_require_pkg(PROTOBUFC  libprotobuf-c  libprotobuf-c-dev)
mc_require_pkg(HIREDIS    hiredis        libhiredis-dev)
mc_require_pkg(CHECK      check          check)
mc_require_pkg(LIBXML2    libxml-2.0     libxml2-dev)
mc_require_pkg(SODIUM     libsodium      libsodium-dev)
mc_require_pkg(ENET       libenet        libenet-dev)

find_program(PROTOC_C_EXECUTABLE protoc-c)
if(NOT PROTOC_C_EXECUTABLE)
  message(FATAL_ERROR "missing protoc-c: install Debian package protobuf-c-compiler")
endif()

find_library(MATH_LIBRARY m)
