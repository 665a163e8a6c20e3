# Flags shared by every ecekde target. Never touches the global CMAKE_CXX_FLAGS.
function(ecekde_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(ECEKDE_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${ECEKDE_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${ECEKDE_SANITIZE})
  endif()
  if(ECEKDE_FUZZ)  # coverage feedback for libFuzzer in every target it reaches
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# Under sanitizers, code whose run time is not its own (tests, argument parsing, JSON and SVG output: the
# library does their work) is compiled at -O0, which halves the compile of its template-heavy headers
# (CLI11, nlohmann-json, GoogleTest) in make test's sanitizer stage; the library keeps the build type's level.
function(ecekde_sanitized_at_o0 target)
  if(ECEKDE_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()

# Resolves an ON/OFF/AUTO setting: AUTO becomes the value of `found`.
function(ecekde_resolve_auto out setting found)
  string(TOUPPER "${setting}" s)
  if(s STREQUAL "AUTO")
    set(${out} ${found} PARENT_SCOPE)
  elseif(s)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()
