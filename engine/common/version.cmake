# Regenerates version.cpp at every build so --version names the revision that was built.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE ORRERY_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rev_result ERROR_QUIET)
if(NOT rev_result EQUAL 0 OR ORRERY_GIT_REVISION STREQUAL "")
  set(ORRERY_GIT_REVISION "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT dirty STREQUAL "")
    set(ORRERY_GIT_REVISION "${ORRERY_GIT_REVISION}-dirty")
  endif()
endif()
configure_file("${INPUT}" "${OUTPUT}.tmp" @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
