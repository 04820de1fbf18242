# CMake toolchain file for building FASTER (libfaster-sys) offline, named by .cargo/config.toml through the
# target-suffixed variable the `cmake` crate reads (CMake itself never looks at that name, so no other build is
# affected). It changes no compiler setting: it only asks CMake to run offline.cmake right after
# `project(FASTER)`.
get_filename_component(_cosine_faster_dir "${CMAKE_CURRENT_LIST_FILE}" DIRECTORY)
set(CMAKE_PROJECT_FASTER_INCLUDE "${_cosine_faster_dir}/offline.cmake")
