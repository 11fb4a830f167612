# Finds node and npm for the console's build (console/CMakeLists.txt
# includes this) and stops with a message a person can act on when they
# are missing or node is too old. Also runs on its own (cmake -P) so that
# tests/unit/test_node_tools.sh can check those messages.
find_program(AIRLOCK_NODE node)
find_program(AIRLOCK_NPM npm)
if(NOT AIRLOCK_NODE OR NOT AIRLOCK_NPM)
  message(FATAL_ERROR "node and npm build the web console (console/, docs/console.md) and "
                      "were not found: run scripts/install-deps.sh as root (Debian's nodejs and npm)")
endif()

# Vite 6, not 7: Debian 12's own nodejs is 18 (Vite 7 needs 20.19).
execute_process(COMMAND ${AIRLOCK_NODE} --version OUTPUT_VARIABLE AIRLOCK_NODE_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX REPLACE "^v" "" AIRLOCK_NODE_VERSION "${AIRLOCK_NODE_VERSION}")
if(NOT AIRLOCK_NODE_VERSION MATCHES "^[0-9]+\\." OR AIRLOCK_NODE_VERSION VERSION_LESS 18)
  message(FATAL_ERROR "the web console's build (Vite 6) needs Node.js 18 or newer; "
                      "${AIRLOCK_NODE} is \"${AIRLOCK_NODE_VERSION}\": run scripts/install-deps.sh "
                      "as root")
endif()
