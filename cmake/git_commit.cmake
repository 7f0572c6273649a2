# Run at build time (cmake -P): writes OUTPUT, a header defining
# BLOCKEIGS_GIT_COMMIT from `git describe --always --dirty` in SOURCE_DIR
# ("unknown" outside a git checkout), only when it changed, so that a build
# with nothing new relinks nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit unknown)
endif()
set(text "#pragma once\n#define BLOCKEIGS_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
