# cmake/Sanitize.cmake - sanitizer builds of piano's own code, for its tests.
#
#   -DPIANO_SANITIZE=address,undefined   (ASan + UBSan)
#   -DPIANO_SANITIZE=thread              (TSan)
#
# The flags go on every target of the project except the LLVM plugin (it is
# loaded into an unsanitized clang). rt/alloc.c interposes malloc and rt/jumps.c
# setjmp/longjmp, as ASan and TSan do: a sanitized build leaves them out
# (PIANO_NO_ALLOC_HOOKS), so the runtime's heap accounting and jump notes are
# not covered there. Only the unit, piano-db and
# fuzz tests make sense in such a build (the e2e programs are built by an
# unsanitized clang against the runtime): scripts/test.sh runs those.
set(PIANO_SANITIZE "" CACHE STRING "Sanitizers for piano's code and tests (address,undefined | thread)")
option(PIANO_NO_ALLOC_HOOKS "Build libpiano_rt without rt/alloc.c and rt/jumps.c (no heap accounting, no setjmp notes)" OFF)

if(PIANO_SANITIZE)
  set(PIANO_NO_ALLOC_HOOKS ON CACHE BOOL "" FORCE)
  set(PIANO_SANITIZE_FLAGS -fsanitize=${PIANO_SANITIZE} -fno-omit-frame-pointer -g)
  if(PIANO_SANITIZE MATCHES "undefined")
    # Any UBSan report fails the test; integer overflow of unsigned values is
    # defined, so no -fsanitize=integer.
    list(APPEND PIANO_SANITIZE_FLAGS -fno-sanitize-recover=all)
  endif()
  message(STATUS "piano: sanitizers ${PIANO_SANITIZE} (alloc hooks left out)")

  # Applied once every target exists (deferred to the end of the top-level file).
  function(piano_sanitize_targets dir)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t ${targets})
      get_target_property(type ${t} TYPE)
      if(t STREQUAL "PianoPass" OR NOT type MATCHES "EXECUTABLE|LIBRARY")
        continue()
      endif()
      if(type STREQUAL "INTERFACE_LIBRARY")
        continue()
      endif()
      target_compile_options(${t} PRIVATE ${PIANO_SANITIZE_FLAGS})
      target_link_options(${t} PRIVATE ${PIANO_SANITIZE_FLAGS})
    endforeach()
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(d ${subdirs})
      piano_sanitize_targets(${d})
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL piano_sanitize_targets ${PROJECT_SOURCE_DIR})
endif()
