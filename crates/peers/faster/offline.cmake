# Runs right after FASTER's `project(FASTER)` (CMAKE_PROJECT_FASTER_INCLUDE, set by toolchain.cmake).
#
# 1. FASTER's CMakeLists configures a nested project that clones googletest from GitHub, which fails offline.
#    We copy Debian's googletest sources (package `googletest`, /usr/src/googletest) into the build folder as a
#    local git repository and point git's URL rewriting at it through the environment (GIT_CONFIG_COUNT/KEY/VALUE,
#    inherited by the nested CMake run and its git clone), so FASTER's own clone runs unchanged.
# 2. Only libfaster.a is needed: the test, benchmark and playground targets are marked EXCLUDE_FROM_ALL once
#    FASTER's CMakeLists has declared them (a deferred call), which takes a clean build from about 2 min 20 s
#    to about 30 s.
set(_cosine_gtest_src "/usr/src/googletest")
if(NOT EXISTS "${_cosine_gtest_src}/CMakeLists.txt")
  message(FATAL_ERROR "FASTER needs Debian's googletest sources in ${_cosine_gtest_src}: apt-get install googletest")
endif()
set(_cosine_gtest_repo "${CMAKE_BINARY_DIR}/googletest-local")
if(NOT EXISTS "${_cosine_gtest_repo}/.git")
  file(REMOVE_RECURSE "${_cosine_gtest_repo}")
  file(COPY "${_cosine_gtest_src}/" DESTINATION "${_cosine_gtest_repo}")
  foreach(_cosine_git_args
      "init;-q;-b;master"
      "add;-A"
      "-c;user.name=cosine;-c;user.email=cosine@localhost;commit;-q;-m;googletest from /usr/src/googletest")
    execute_process(COMMAND git ${_cosine_git_args}
      WORKING_DIRECTORY "${_cosine_gtest_repo}" RESULT_VARIABLE _cosine_git_result)
    if(_cosine_git_result)
      message(FATAL_ERROR "git ${_cosine_git_args} in ${_cosine_gtest_repo} failed: ${_cosine_git_result}")
    endif()
  endforeach()
endif()
set(ENV{GIT_CONFIG_COUNT} "1")
set(ENV{GIT_CONFIG_KEY_0} "url.${_cosine_gtest_repo}.insteadOf")
set(ENV{GIT_CONFIG_VALUE_0} "https://github.com/google/googletest.git")

function(_cosine_faster_exclude dir)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t IN LISTS _targets)
    set_target_properties(${_t} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_d IN LISTS _subdirs)
    _cosine_faster_exclude("${_d}")
  endforeach()
endfunction()
function(_cosine_faster_only_the_library)
  foreach(_d test benchmark-dir playground)
    _cosine_faster_exclude("${CMAKE_SOURCE_DIR}/${_d}")
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _cosine_faster_only_the_library)
