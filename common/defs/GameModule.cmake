# mc_add_game_module(<name> RES <resource dir> SOURCES <handler sources...>)
#
# Builds a game module: a shared library <build>/lib/<name>.so made of the code defc
# generates from the resource folder (entities.xml, entity_defs/) and the game's handler
# sources. Engines load it at run time with mc_game_open (common/game_module.h). The
# generated headers (<Type>.h, game.h) are on the module's include path. Sets
# <name>_GENERATED_DIR in the caller's scope.
function(mc_add_game_module name)
  cmake_parse_arguments(ARG "" "RES" "SOURCES" ${ARGN})
  if(NOT ARG_RES)
    message(FATAL_ERROR "mc_add_game_module(${name}): RES <dir> is required")
  endif()
  get_filename_component(res ${ARG_RES} ABSOLUTE)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}-generated)
  file(GLOB_RECURSE def_files CONFIGURE_DEPENDS
    ${res}/entities.xml ${res}/entity_defs/*.def ${res}/entity_defs/*.xml)
  add_custom_command(
    OUTPUT ${gen}/game_module.c ${gen}/game_types.c ${gen}/game_client.c ${gen}/game.h
           ${gen}/game_values.c ${gen}/game_values.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
    COMMAND $<TARGET_FILE:defc> --res ${res} --out ${gen} --module ${name}
    DEPENDS defc ${def_files}
    COMMENT "defc: generating game module ${name} from ${res}"
    VERBATIM)
  add_library(${name} SHARED ${gen}/game_module.c ${gen}/game_types.c ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${gen})
  # Every handler and engine callback has a generated prototype: a function the game defines
  # without one (a misspelt hook or handler) is an error, not code that never runs. Their
  # parameters are the SDK's, not the game's choice: one a handler does not need is no error.
  target_compile_options(${name} PRIVATE -Wmissing-prototypes -Werror -Wno-unused-parameter)
  target_link_libraries(${name} PRIVATE mc_defs)
  set_target_properties(${name} PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
  # Only mc_game_module_get is visible: the static libraries linked in stay private.
  target_link_options(${name} PRIVATE -Wl,--exclude-libs,ALL)
  set(${name}_GENERATED_DIR ${gen} PARENT_SCOPE)
endfunction()

# mc_add_game_client(<name> RES <resource dir> SOURCES <client handler sources...>)
#
# The client side of a game for a C client (docs/CLIENT.md): a static library <name> of the
# property structs and typed senders defc generates (compiled with MC_GAME_CLIENT_SIDE: no
# server dispatchers), the client-part dispatch table (mc_game_client_get) and the client's
# handlers (<Type>_client_<method>), which the sources must define for every client method.
# The generated headers are on its public include path.
function(mc_add_game_client name)
  cmake_parse_arguments(ARG "" "RES" "SOURCES" ${ARGN})
  if(NOT ARG_RES)
    message(FATAL_ERROR "mc_add_game_client(${name}): RES <dir> is required")
  endif()
  get_filename_component(res ${ARG_RES} ABSOLUTE)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}-generated)
  file(GLOB_RECURSE def_files CONFIGURE_DEPENDS
    ${res}/entities.xml ${res}/entity_defs/*.def ${res}/entity_defs/*.xml)
  add_custom_command(
    OUTPUT ${gen}/game_types.c ${gen}/game_client.c ${gen}/game.h ${gen}/game_values.c
           ${gen}/game_values.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
    COMMAND $<TARGET_FILE:defc> --res ${res} --out ${gen} --module ${name}
    DEPENDS defc ${def_files}
    COMMENT "defc: generating the client side of ${name} from ${res}"
    VERBATIM)
  add_library(${name} STATIC ${gen}/game_types.c ${gen}/game_client.c ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${gen})
  target_compile_options(${name} PRIVATE -Wmissing-prototypes -Werror -Wno-unused-parameter)
  target_compile_definitions(${name} PRIVATE MC_GAME_CLIENT_SIDE)
  target_link_libraries(${name} PUBLIC mc_defs)
endfunction()
