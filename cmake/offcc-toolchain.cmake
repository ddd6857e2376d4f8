# offcc-toolchain.cmake: build a CMake project with offcc.
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<this file> \
#         -DOFFCC_OPENMP_TARGETS=x86_64-pc-linux-gnu   # OpenMP offload, and/or
#         -DOFFCC_OFFLOAD_ARCH="sm_80;sm_90"            # CUDA/HIP architectures
#
# It makes offcc and offcc++ the C and C++ (and CUDA and HIP) compilers,
# drives the LLVM you pick (19 or 22) with them, takes that LLVM's binutils,
# and turns the offload targets into flags. To pick LLVM 19:
#
#   cmake ... -DOFFCC_LLVM_VERSION=19             # /usr/lib/llvm-19/bin, or
#   cmake ... -DOFFCC_LLVM_DIR=/usr/lib/llvm-19/bin
#
# Cache variables (give them with -D on the first configure):
#
#   OFFCC_BIN_DIR         directory holding offcc and offcc++. Default: the
#                         bin/ beside this file's directory (offcc's source
#                         tree: cmake/ next to bin/), else <prefix>/bin when
#                         installed as <prefix>/share/offcc/cmake/, else the
#                         directory of offcc on PATH.
#   OFFCC_LLVM_VERSION    the LLVM release offcc drives: 19 or 22 (offcc's
#                         profiles; another is refused in one line). Default:
#                         OFFCC_LLVM_DIR's release.
#   OFFCC_LLVM_DIR        the bin directory of that LLVM; its release is read
#                         from ../lib/clang/<N>, else from its clang
#                         --version, and must be OFFCC_LLVM_VERSION's when
#                         both are given (else one error line). Default:
#                         $OFFCC_LLVM_DIR (when it holds OFFCC_LLVM_VERSION's
#                         release, if that is given), else
#                         /usr/lib/llvm-<OFFCC_LLVM_VERSION>/bin, else
#                         /usr/lib/llvm-22/bin. Every compile and link offcc
#                         runs drives this LLVM (see "The LLVM" below).
#   OFFCC_OPENMP_TARGETS  OpenMP offload target triples (a list), such as
#                         x86_64-pc-linux-gnu (the host device),
#                         nvptx64-nvidia-cuda, amdgcn-amd-amdhsa. Only these
#                         make C and C++ OpenMP offload compiles.
#   OFFCC_OFFLOAD_ARCH    GPU architectures (a list), such as gfx90a;sm_90:
#                         for CUDA and HIP, and for the GPU triples of
#                         OFFCC_OPENMP_TARGETS (see "The rule" below).
#   OFFCC_OPENMP          ON (default): when there are OpenMP targets, C and
#                         C++ compile and link with -fopenmp and the offload
#                         flags (added to CMAKE_C_FLAGS and CMAKE_CXX_FLAGS).
#                         OFF: nothing is added; apply OFFCC_OPENMP_FLAGS
#                         yourself with target_compile_options() and
#                         target_link_options().
#   OFFCC_BASE_DIR        the base directory of every compile (offcc's
#                         base_dir, as ccache's: absolute paths under it, as
#                         CMake writes sources and include directories, are
#                         given to clang relative to the build directory, so
#                         that another checkout, or another build directory
#                         at the same place in the tree, gives the same
#                         command lines, objects and cache entries). Default:
#                         the deepest directory holding both the source and
#                         the build directory (the checkout, for a build
#                         directory inside it). Empty or OFF: none. A base
#                         of "/" is accepted and passed on, but offcc ignores
#                         it (every path would count as relative). No
#                         environment variable is needed, and
#                         OFFCC_BASE_DIR in cmake's environment plays no part:
#                         the value reaches the compiles as shown below.
#
# What it sets:
#
#   CMAKE_C_COMPILER, CMAKE_CXX_COMPILER    offcc, offcc++ in OFFCC_BIN_DIR
#   CMAKE_CUDA_COMPILER, CMAKE_HIP_COMPILER offcc++ (unless already set)
#   CMAKE_AR, CMAKE_RANLIB, CMAKE_NM, CMAKE_OBJCOPY, CMAKE_OBJDUMP,
#   CMAKE_STRIP, CMAKE_<LANG>_COMPILER_AR, CMAKE_<LANG>_COMPILER_RANLIB
#                         the LLVM's tools, llvm-<tool>-<N> or llvm-<tool>:
#                         for LLVM 22 the llvm-* links beside offcc (make
#                         build and make install create them, to 22's
#                         tools) first, else those in OFFCC_LLVM_DIR; for
#                         another release OFFCC_LLVM_DIR's first. LLVM 14's
#                         llvm-ar cannot index LLVM 22 bitcode (-flto, IPO).
#   OFFCC_OPENMP_FLAGS    the OpenMP offload flags (a list), e.g.
#                         -fopenmp;-fopenmp-targets=x86_64-pc-linux-gnu
#   CMAKE_CUDA_ARCHITECTURES  the sm_* of OFFCC_OFFLOAD_ARCH, without "sm_"
#   CMAKE_HIP_ARCHITECTURES   the gfx* of OFFCC_OFFLOAD_ARCH
#   CMAKE_<LANG>_COMPILER_LAUNCHER (C, CXX, CUDA, HIP)
#                         env;OFFCC_BASE_DIR=<OFFCC_BASE_DIR>;
#                         OFFCC_LLVM_DIR=<OFFCC_LLVM_DIR>, then the launcher
#                         you gave (-DCMAKE_C_COMPILER_LAUNCHER=ccache gives
#                         env;OFFCC_BASE_DIR=<dir>;OFFCC_LLVM_DIR=<llvm>;ccache;
#                         so does the CMAKE_<LANG>_COMPILER_LAUNCHER
#                         environment variable CMake reads). No
#                         OFFCC_BASE_DIR= when there is no base directory.
#   RULE_LAUNCH_LINK      (global property) env OFFCC_LLVM_DIR=<llvm>, for
#                         every link and archive step, unless the project
#                         sets its own.
#   ENV{OFFCC_LLVM_DIR}   <llvm>, in cmake's environment while it
#                         configures (CMake's compiler checks).
#   CMAKE_CUDA_DEVICE_LINK_COMPILE
#                         CMake's, with env OFFCC_LLVM_DIR=<llvm> at its head
#                         (the CUDA device stub's rule takes no launcher).
#
# The rule, clang's: OFFCC_OPENMP_TARGETS, and nothing else, names the
# OpenMP offload targets (-fopenmp -fopenmp-targets=<them, joined by ",">).
# Each sm_* of OFFCC_OFFLOAD_ARCH goes to CMAKE_CUDA_ARCHITECTURES and each
# gfx* to CMAKE_HIP_ARCHITECTURES; they reach OpenMP only for a GPU triple
# that OFFCC_OPENMP_TARGETS names: nvptx64-nvidia-cuda (or nvptx64) takes
# the sm_*, amdgcn-amd-amdhsa (or amdgcn) the gfx*, as
# -Xopenmp-target=<triple> --offload-arch=<archs, joined by ",">. So a bare
# OFFCC_OFFLOAD_ARCH adds no flags: C and C++ stay plain host compiles, and
# only CUDA and HIP sources get device code. Architectures that neither
# OpenMP nor an enabled CUDA or HIP uses get a warning once the project's
# CMakeLists.txt has run (e.g. a lone OFFCC_OFFLOAD_ARCH=gfx90a in a C
# project), naming the OFFCC_OPENMP_TARGETS to set. For example:
#
#   OFFCC_OFFLOAD_ARCH=sm_80;sm_90          C, C++: nothing; CUDA: 80;90
#   OFFCC_OPENMP_TARGETS=x86_64-pc-linux-gnu;nvptx64-nvidia-cuda
#   OFFCC_OFFLOAD_ARCH=sm_90;gfx90a         C, C++: -fopenmp
#       -fopenmp-targets=x86_64-pc-linux-gnu,nvptx64-nvidia-cuda
#       -Xopenmp-target=nvptx64-nvidia-cuda --offload-arch=sm_90
#                                           CUDA: 90; HIP: gfx90a
#
# An OpenMP offload to nvptx64 or amdgcn links LLVM's OpenMP device runtime,
# libomptarget-nvptx.bc or libomptarget-amdgpu.bc, which some LLVMs
# (Debian's LLVM 22) lack. With OFFCC_OPENMP on, configuring stops with one
# line saying so when it is in none of the places clang looks: LIBRARY_PATH,
# offcc's library directories (offcc -print-search-dirs) and
# <OFFCC_LLVM_DIR>/../lib/<triple>.
#
# -fopenmp is added here, with the targets, because clang silently ignores
# -fopenmp-targets= without it, and the offload flags must reach the link
# line as well as the compiles (OpenMP::OpenMP_C from find_package(OpenMP)
# brings -fopenmp to compiles only). find_package(OpenMP) still works
# alongside.
#
# The flags go into CMAKE_<LANG>_FLAGS_INIT, which CMake reads once, into a
# new build directory's cache, and not when CMAKE_<LANG>_FLAGS is given
# with -D: to change the targets, configure a new build directory (or edit
# CMAKE_C_FLAGS and CMAKE_CXX_FLAGS). A warning says when they lack them.
#
# CUDA and HIP projects (enable_language(CUDA/HIP)) also need a CUDA toolkit
# or ROCm; CMake adds --cuda-gpu-arch= / --offload-arch= from the
# architectures itself.
#
# The LLVM: offcc drives the LLVM of OFFCC_LLVM_DIR (offcc -v says "LLVM N
# profile"). CMake's compiler checks run in cmake's environment, where this
# file sets OFFCC_LLVM_DIR; the build's compiles get it in their launcher
# (below), its links and archives through RULE_LAUNCH_LINK and the CUDA
# device stub through CMAKE_CUDA_DEVICE_LINK_COMPILE, so neither
# the build's environment nor compile_commands.json needs it. A project
# whose C and C++ flags do not find its LLVM's OpenMP runtime (omp.h,
# libomp) gives them as usual, e.g. CFLAGS/CXXFLAGS="-isystem <dir>" and
# LDFLAGS="-L<dir>" in the environment of the first configure; a program
# linked with LLVM 19 finds libomptarget through LD_LIBRARY_PATH.
#
# The base directory reaches the compiles, at build time, as a compiler
# launcher, "env OFFCC_BASE_DIR=<dir>" before the compiler, with the Unix
# Makefiles and Ninja generators alike; link lines do not get it (they need
# none). A launcher, rather than a flag: CMake 3.25 leaves launchers out of
# compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS), whose commands stay
# clang's (clangd and clang-tidy know no offcc flag), with the absolute
# paths CMake wrote; they still compile alike, without the base directory.
# A project that sets CMAKE_<LANG>_COMPILER_LAUNCHER itself (set(), not
# -D), or a target's <LANG>_COMPILER_LAUNCHER property, would drop it: at
# the end of the top-level CMakeLists.txt every target of the project whose
# launcher lacks it gets it prepended. try_compile projects (CMake's
# compiler checks) get the outer project's base directory.

if(NOT DEFINED OFFCC_BIN_DIR)
  set(_offcc_dir "")
  foreach(_d "${CMAKE_CURRENT_LIST_DIR}/../bin" "${CMAKE_CURRENT_LIST_DIR}/../../../bin")
    if(NOT _offcc_dir AND EXISTS "${_d}/offcc")
      get_filename_component(_offcc_dir "${_d}" ABSOLUTE)
    endif()
  endforeach()
  if(NOT _offcc_dir)
    find_program(_offcc_exe offcc)
    if(_offcc_exe)
      get_filename_component(_offcc_dir "${_offcc_exe}" DIRECTORY)
    endif()
    unset(_offcc_exe CACHE)
  endif()
  set(OFFCC_BIN_DIR "${_offcc_dir}" CACHE PATH "Directory of offcc and offcc++")
endif()
if(NOT EXISTS "${OFFCC_BIN_DIR}/offcc")
  message(FATAL_ERROR "offcc not found (OFFCC_BIN_DIR=\"${OFFCC_BIN_DIR}\"); set OFFCC_BIN_DIR to the directory of offcc and offcc++")
endif()

# The LLVM offcc drives: OFFCC_LLVM_VERSION, OFFCC_LLVM_DIR, or both (see
# the header). _offcc_llvm_versions are the releases offcc drives (its
# toolchain profiles); the version of a directory is read from its
# ../lib/clang/<N>, else from its clang --version.
set(_offcc_llvm_versions 19 22)
function(_offcc_llvm_version_of var dir)
  get_property(_memo GLOBAL PROPERTY "_OFFCC_LLVM_VERSION_OF_${dir}" SET)
  if(_memo)
    get_property(_v GLOBAL PROPERTY "_OFFCC_LLVM_VERSION_OF_${dir}")
    set(${var} "${_v}" PARENT_SCOPE)
    return()
  endif()
  set(_v "")
  file(GLOB _res LIST_DIRECTORIES true "${dir}/../lib/clang/*")
  list(LENGTH _res _n)
  if(_n EQUAL 1)
    get_filename_component(_r "${_res}" NAME)
    if(_r MATCHES "^([0-9]+)")
      set(_v "${CMAKE_MATCH_1}")
    endif()
  endif()
  if(NOT _v AND EXISTS "${dir}/clang")
    execute_process(COMMAND "${dir}/clang" --version OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _out MATCHES "clang version ([0-9]+)\\.")
      set(_v "${CMAKE_MATCH_1}")
    endif()
  endif()
  set_property(GLOBAL PROPERTY "_OFFCC_LLVM_VERSION_OF_${dir}" "${_v}")
  set(${var} "${_v}" PARENT_SCOPE)
endfunction()
list(JOIN _offcc_llvm_versions " and " _offcc_known)
set(_offcc_ver "")
if(DEFINED OFFCC_LLVM_VERSION AND NOT OFFCC_LLVM_VERSION STREQUAL "")
  set(_offcc_ver "${OFFCC_LLVM_VERSION}")
  list(FIND _offcc_llvm_versions "${_offcc_ver}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "OFFCC_LLVM_VERSION=${_offcc_ver}: offcc drives LLVM ${_offcc_known} (set OFFCC_LLVM_VERSION to one of them, or OFFCC_LLVM_DIR to its bin directory)")
  endif()
endif()
if(NOT DEFINED OFFCC_LLVM_DIR)
  # $OFFCC_LLVM_DIR when it holds the LLVM asked for (any, without
  # OFFCC_LLVM_VERSION), else Debian's directory of that release.
  set(_offcc_llvm "")
  if(DEFINED ENV{OFFCC_LLVM_DIR} AND NOT "$ENV{OFFCC_LLVM_DIR}" STREQUAL "")
    set(_offcc_llvm "$ENV{OFFCC_LLVM_DIR}")
    if(_offcc_ver)
      _offcc_llvm_version_of(_v "${_offcc_llvm}")
      if(NOT _v STREQUAL _offcc_ver)
        set(_offcc_llvm "")
      endif()
    endif()
  endif()
  if(NOT _offcc_llvm)
    if(_offcc_ver)
      set(_offcc_llvm "/usr/lib/llvm-${_offcc_ver}/bin")
    else()
      set(_offcc_llvm /usr/lib/llvm-22/bin)
    endif()
  endif()
  set(OFFCC_LLVM_DIR "${_offcc_llvm}" CACHE PATH "The bin directory of the LLVM offcc drives (LLVM ${_offcc_known})")
endif()
_offcc_llvm_version_of(_v "${OFFCC_LLVM_DIR}")
if(_offcc_ver AND _v AND NOT _v STREQUAL _offcc_ver)
  message(FATAL_ERROR "OFFCC_LLVM_VERSION=${_offcc_ver} but OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR} is LLVM ${_v}: give one of them, or both for the same LLVM (a build directory keeps both in its cache)")
elseif(NOT _offcc_ver AND NOT _v)
  message(FATAL_ERROR "OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR} holds no LLVM (no ../lib/clang/<N>, no clang that runs): set it to the bin directory of LLVM ${_offcc_known}, or set OFFCC_LLVM_VERSION")
elseif(NOT _offcc_ver)
  list(FIND _offcc_llvm_versions "${_v}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR} is LLVM ${_v}: offcc drives LLVM ${_offcc_known}")
  endif()
  set(_offcc_ver "${_v}")
endif()
set(OFFCC_LLVM_VERSION "${_offcc_ver}" CACHE STRING "The LLVM release offcc drives (${_offcc_known})")
# Configuring runs the compiler (CMake's checks, try_compile builds) with
# this LLVM; the build's compiles and links get it through launchers
# (below).
set(ENV{OFFCC_LLVM_DIR} "${OFFCC_LLVM_DIR}")
set(OFFCC_OPENMP_TARGETS "" CACHE STRING "OpenMP offload target triples (a list), e.g. x86_64-pc-linux-gnu")
set(OFFCC_OFFLOAD_ARCH "" CACHE STRING "GPU architectures (a list), e.g. gfx90a;sm_90: for CUDA and HIP, and for the GPU triples of OFFCC_OPENMP_TARGETS")
option(OFFCC_OPENMP "Compile and link C and C++ with -fopenmp and the offload targets" ON)
# The base directory (see the header): by default the deepest directory
# holding the source and build directories. Computed once, in the top-level
# project: a try_compile project gets the outer one's value (below), not
# the common parent of its own directories.
function(_offcc_common_parent var a b)
  set(_p "${a}")
  while(NOT _p STREQUAL "/" AND NOT _p STREQUAL "")
    string(FIND "${b}/" "${_p}/" _at)
    if(_at EQUAL 0)
      break()
    endif()
    get_filename_component(_p "${_p}" DIRECTORY)
  endwhile()
  if(_p STREQUAL "")
    set(_p "/")
  endif()
  set(${var} "${_p}" PARENT_SCOPE)
endfunction()
if(NOT DEFINED OFFCC_BASE_DIR)
  _offcc_common_parent(_offcc_base "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}")
  set(OFFCC_BASE_DIR "${_offcc_base}" CACHE PATH
    "Base directory of the compiles (offcc's base_dir); empty or OFF: none")
endif()
# try_compile projects (CMake's compiler checks) see the same settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
  OFFCC_BIN_DIR OFFCC_LLVM_DIR OFFCC_LLVM_VERSION OFFCC_OPENMP_TARGETS OFFCC_OFFLOAD_ARCH OFFCC_OPENMP OFFCC_BASE_DIR)

set(CMAKE_C_COMPILER "${OFFCC_BIN_DIR}/offcc")
set(CMAKE_CXX_COMPILER "${OFFCC_BIN_DIR}/offcc++")
foreach(_lang CUDA HIP)
  if(NOT CMAKE_${_lang}_COMPILER)
    set(CMAKE_${_lang}_COMPILER "${OFFCC_BIN_DIR}/offcc++")
  endif()
endforeach()

# The base directory reaches every compile as a launcher, before the
# user's: CMAKE_<LANG>_COMPILER_LAUNCHER given with -D (the cache entry, not
# this variable, which another read of this file set) or in the
# environment (which CMake reads only when the variable is not set).
set(_offcc_launcher env)
if(OFFCC_BASE_DIR)
  list(APPEND _offcc_launcher "OFFCC_BASE_DIR=${OFFCC_BASE_DIR}")
endif()
list(APPEND _offcc_launcher "OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR}")
foreach(_lang C CXX CUDA HIP)
  if(DEFINED CACHE{CMAKE_${_lang}_COMPILER_LAUNCHER})
    set(_user "$CACHE{CMAKE_${_lang}_COMPILER_LAUNCHER}")
  elseif(DEFINED ENV{CMAKE_${_lang}_COMPILER_LAUNCHER})
    # Into the cache, as CMake puts it there on the first configure.
    set(_user "$ENV{CMAKE_${_lang}_COMPILER_LAUNCHER}")
    set(CMAKE_${_lang}_COMPILER_LAUNCHER "${_user}" CACHE STRING "Compiler launcher for ${_lang}.")
  else()
    set(_user "")
  endif()
  set(CMAKE_${_lang}_COMPILER_LAUNCHER ${_offcc_launcher} ${_user})
endforeach()
# Link steps (every language, both generators) get the LLVM as well: a
# link of LLVM 19's objects is clang 19's (its OpenMP offload entries, its
# CUDA device link). CMake 3.25's <LANG>_LINKER_LAUNCHER knows only C and
# C++, so this is the global RULE_LAUNCH_LINK, unless the project (or
# CTest's launchers) set one.
get_property(_offcc_rll GLOBAL PROPERTY RULE_LAUNCH_LINK)
if(NOT _offcc_rll OR _offcc_rll MATCHES "^env OFFCC_LLVM_DIR=")
  set_property(GLOBAL PROPERTY RULE_LAUNCH_LINK "env OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR}")
endif()
# CMake's CUDA device stub (separable compilation's link.stub) is compiled
# by a rule with no launcher: its command, CMAKE_CUDA_DEVICE_LINK_COMPILE,
# gets the LLVM when CMake sets it (CMakeCUDAInformation, after this file).
macro(_offcc_stub_llvm _var _access)
  if("${_access}" STREQUAL "MODIFIED_ACCESS" AND NOT "${${_var}}" MATCHES "^env OFFCC_LLVM_DIR=")
    set(${_var} "env OFFCC_LLVM_DIR=${OFFCC_LLVM_DIR} ${${_var}}")
  endif()
endmacro()
if(NOT CMAKE_SCRIPT_MODE_FILE)
  variable_watch(CMAKE_CUDA_DEVICE_LINK_COMPILE _offcc_stub_llvm)
endif()
# A project that sets its own launcher (set() in its CMakeLists.txt, or a
# target's <LANG>_COMPILER_LAUNCHER) replaces the variable above: once the
# top-level CMakeLists.txt has run, each target of the project whose
# launcher for a language lacks the base directory gets it prepended.
function(_offcc_targets_in dir var)
  get_property(_t DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _offcc_targets_in("${_sub}" _more)
    list(APPEND _t ${_more})
  endforeach()
  set(${var} "${_t}" PARENT_SCOPE)
endfunction()
function(_offcc_launch_with_base_dir)
  get_property(_launcher GLOBAL PROPERTY _OFFCC_LAUNCHER)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  _offcc_targets_in("${CMAKE_SOURCE_DIR}" _targets)
  foreach(_target IN LISTS _targets)
    get_property(_type TARGET "${_target}" PROPERTY TYPE)
    if(NOT _type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    foreach(_lang C CXX CUDA HIP)
      if(NOT _lang IN_LIST _langs)
        continue()
      endif()
      get_property(_l TARGET "${_target}" PROPERTY ${_lang}_COMPILER_LAUNCHER)
      list(LENGTH _launcher _n)
      list(LENGTH _l _ln)
      set(_head "")
      if(_ln GREATER_EQUAL _n)
        list(SUBLIST _l 0 ${_n} _head)
      endif()
      if(NOT _head STREQUAL _launcher)
        set_property(TARGET "${_target}" PROPERTY ${_lang}_COMPILER_LAUNCHER ${_launcher} ${_l})
      endif()
    endforeach()
  endforeach()
endfunction()
# _offcc_defer_once(PROP VALUE FN): set the global property PROP to VALUE
# and call FN once at the end of the top-level directory (CMake reads this
# file more than once per configure).
function(_offcc_defer_once prop value fn)
  get_property(_deferred GLOBAL PROPERTY ${prop} SET)
  set_property(GLOBAL PROPERTY ${prop} "${value}")
  if(NOT _deferred)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL ${fn})
  endif()
endfunction()
get_property(_offcc_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(_offcc_launcher AND NOT _offcc_in_try_compile AND NOT CMAKE_SCRIPT_MODE_FILE)
  _offcc_defer_once(_OFFCC_LAUNCHER "${_offcc_launcher}" _offcc_launch_with_base_dir)
endif()

# Binutils: llvm-<tool>-<OFFCC_LLVM_VERSION> or llvm-<tool>, beside offcc
# first. Never from PATH, where /usr/bin/llvm-ar may be another LLVM's.
# The links beside offcc (make build, make install) are LLVM 22's: another
# release's tools come from OFFCC_LLVM_DIR first.
set(_offcc_tool_dirs "${OFFCC_BIN_DIR}" "${OFFCC_LLVM_DIR}")
if(NOT OFFCC_LLVM_VERSION STREQUAL "22")
  list(REVERSE _offcc_tool_dirs)
endif()
foreach(_tool AR RANLIB NM OBJCOPY OBJDUMP STRIP)
  string(TOLOWER "llvm-${_tool}" _name)
  find_program(CMAKE_${_tool} NAMES ${_name}-${OFFCC_LLVM_VERSION} ${_name} NAMES_PER_DIR
    PATHS ${_offcc_tool_dirs} NO_DEFAULT_PATH)
endforeach()
foreach(_lang C CXX CUDA HIP)
  foreach(_tool AR RANLIB)
    if(CMAKE_${_tool})
      set(CMAKE_${_lang}_COMPILER_${_tool} "${CMAKE_${_tool}}" CACHE FILEPATH "LLVM ${OFFCC_LLVM_VERSION}'s ${_tool} for IPO")
    endif()
  endforeach()
endforeach()

# Offload flags (the rule is in the header). GPU architectures go to
# CMAKE_CUDA_ARCHITECTURES and CMAKE_HIP_ARCHITECTURES; to OpenMP only for a
# triple of OFFCC_OPENMP_TARGETS, through -Xopenmp-target= (clang applies
# a bare --offload-arch= to every -fopenmp-targets triple, and warns
# "argument unused" about -Xopenmp-target=T --offload-arch=, which it does
# use).
set(_offcc_cuda_archs "")
set(_offcc_hip_archs "")
set(_offcc_archs_nvptx "")
set(_offcc_archs_amdgpu "")
foreach(_arch IN LISTS OFFCC_OFFLOAD_ARCH)
  if(_arch MATCHES "^sm_(.+)$")
    list(APPEND _offcc_cuda_archs "${CMAKE_MATCH_1}")
    list(APPEND _offcc_archs_nvptx "${_arch}")
  elseif(_arch MATCHES "^gfx")
    list(APPEND _offcc_hip_archs "${_arch}")
    list(APPEND _offcc_archs_amdgpu "${_arch}")
  else()
    message(FATAL_ERROR "OFFCC_OFFLOAD_ARCH: unknown architecture \"${_arch}\" (expected gfx* or sm_*)")
  endif()
endforeach()

# The GPU triples of OFFCC_OPENMP_TARGETS: nvptx64[-nvidia-cuda] takes the
# sm_* and needs LLVM's OpenMP device runtime libomptarget-nvptx.bc,
# amdgcn[-amd-amdhsa] the gfx* and libomptarget-amdgpu.bc.
set(OFFCC_OPENMP_FLAGS "")
set(_offcc_gpu_targets "")
if(OFFCC_OPENMP_TARGETS)
  list(JOIN OFFCC_OPENMP_TARGETS "," _targets)
  set(OFFCC_OPENMP_FLAGS -fopenmp "-fopenmp-targets=${_targets}")
  foreach(_triple IN LISTS OFFCC_OPENMP_TARGETS)
    if(_triple MATCHES "^nvptx64(-|$)")
      set(_rt nvptx)
      set(_rt_triple nvptx64-nvidia-cuda)
    elseif(_triple MATCHES "^amdgcn(-|$)")
      set(_rt amdgpu)
      set(_rt_triple amdgcn-amd-amdhsa)
    else()
      continue()
    endif()
    list(APPEND _offcc_gpu_targets "${_triple}|${_rt}|${_rt_triple}")
    if(_offcc_archs_${_rt})
      list(JOIN _offcc_archs_${_rt} "," _archs)
      list(APPEND OFFCC_OPENMP_FLAGS "-Xopenmp-target=${_triple}" "--offload-arch=${_archs}")
    endif()
  endforeach()
endif()

# An OpenMP offload to a GPU links LLVM's OpenMP device runtime,
# libomptarget-<nvptx|amdgpu>.bc, which not every LLVM ships (Debian's
# LLVM 22 does not). Without it every link (CMake's compiler checks first)
# fails, so say so here, in one line (not again in try_compile projects).
# clang looks in LIBRARY_PATH, in the compiler's library directories
# (offcc -print-search-dirs) and in <LLVM>/lib/<triple>.
function(_offcc_find_in var file)  # the first existing <dir>/<file> of ARGN
  foreach(_d IN LISTS ARGN)
    string(STRIP "${_d}" _d)
    if(_d AND EXISTS "${_d}/${file}")
      set(${var} "${_d}/${file}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${var} "" PARENT_SCOPE)
endfunction()
if(OFFCC_OPENMP AND _offcc_gpu_targets AND NOT _offcc_in_try_compile)
  set(_lp "")
  if(DEFINED ENV{LIBRARY_PATH})
    string(REPLACE ":" ";" _lp "$ENV{LIBRARY_PATH}")
  endif()
  foreach(_target IN LISTS _offcc_gpu_targets)
    string(REPLACE "|" ";" _target "${_target}")
    list(GET _target 0 _triple)
    list(GET _target 1 _rt)
    list(GET _target 2 _rt_triple)
    set(_rtl "libomptarget-${_rt}.bc")
    get_filename_component(_rtl_dir "${OFFCC_LLVM_DIR}/../lib/${_rt_triple}" ABSOLUTE)
    _offcc_find_in(_found "${_rtl}" "${_rtl_dir}" ${_lp})
    if(NOT _found)
      # Asked once per cmake run (CMake reads this file several times).
      get_property(_asked GLOBAL PROPERTY _OFFCC_SEARCH_DIRS SET)
      if(NOT _asked)
        set(_dirs "")
        execute_process(COMMAND "${CMAKE_C_COMPILER}" -print-search-dirs
          OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc)
        if(_rc EQUAL 0 AND _out MATCHES "(^|\n)libraries: =([^\n]*)")
          string(REPLACE ":" ";" _dirs "${CMAKE_MATCH_2}")
        endif()
        set_property(GLOBAL PROPERTY _OFFCC_SEARCH_DIRS "${_dirs}")
      endif()
      get_property(_dirs GLOBAL PROPERTY _OFFCC_SEARCH_DIRS)
      _offcc_find_in(_found "${_rtl}" ${_dirs})
    endif()
    if(NOT _found)
      message(FATAL_ERROR "OpenMP offload to ${_triple} needs LLVM's OpenMP device "
        "runtime ${_rtl}, which is missing (not in ${_rtl_dir}, LIBRARY_PATH or offcc's "
        "library directories): build and install LLVM's OpenMP offload runtime for "
        "${_rt_triple}, or drop ${_triple} from OFFCC_OPENMP_TARGETS, or configure with "
        "-DOFFCC_OPENMP=OFF")
    endif()
  endforeach()
endif()

if(OFFCC_OPENMP AND OFFCC_OPENMP_FLAGS)
  list(JOIN OFFCC_OPENMP_FLAGS " " _flags)
  set(CMAKE_C_FLAGS_INIT "${_flags}")
  set(CMAKE_CXX_FLAGS_INIT "${_flags}")
  # CMake fills CMAKE_<LANG>_FLAGS from _INIT only when it makes the cache
  # entry: not in a build directory configured before, nor when the flags
  # are given with -D.
  foreach(_lang C CXX)
    if(DEFINED CACHE{CMAKE_${_lang}_FLAGS})
      string(FIND " $CACHE{CMAKE_${_lang}_FLAGS} " " ${_flags} " _at)
      if(_at EQUAL -1)
        message(WARNING "CMAKE_${_lang}_FLAGS (\"$CACHE{CMAKE_${_lang}_FLAGS}\") lacks the offload "
          "flags \"${_flags}\": add them, or configure a new build directory")
      endif()
    endif()
  endforeach()
endif()
# A GPU architecture that no compile uses: OFFCC_OFFLOAD_ARCH alone makes no
# OpenMP offload (see "The rule"), and a project that enables neither CUDA
# nor HIP would build host code only, or fail to link on the OpenMP API
# (omp_is_initial_device) it calls without -fopenmp. Which languages the
# project enables is known only once its CMakeLists.txt has run, so the
# check is deferred to the end of the top-level directory. A warning, not an
# error: the build is still well-formed, and a superbuild may pass one
# OFFCC_OFFLOAD_ARCH to C-only subprojects on purpose.
set(_offcc_unused_archs "")
foreach(_rt nvptx amdgpu)
  set(_used OFF)
  foreach(_target IN LISTS _offcc_gpu_targets)
    if(_target MATCHES "\\|${_rt}\\|")
      set(_used ON)
    endif()
  endforeach()
  if(NOT _used AND _offcc_archs_${_rt})
    list(APPEND _offcc_unused_archs ${_offcc_archs_${_rt}})
  endif()
endforeach()
function(_offcc_check_unused_archs)
  get_property(_archs GLOBAL PROPERTY _OFFCC_UNUSED_ARCHS)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_unused "")
  set(_set "")
  set(_enable "")
  foreach(_arch IN LISTS _archs)
    if(_arch MATCHES "^sm_" AND NOT "CUDA" IN_LIST _langs)
      list(APPEND _unused "${_arch}")
      if(NOT "nvptx64-nvidia-cuda" IN_LIST _set)
        list(APPEND _set nvptx64-nvidia-cuda)
        list(APPEND _enable CUDA)
      endif()
    elseif(_arch MATCHES "^gfx" AND NOT "HIP" IN_LIST _langs)
      list(APPEND _unused "${_arch}")
      if(NOT "amdgcn-amd-amdhsa" IN_LIST _set)
        list(APPEND _set amdgcn-amd-amdhsa)
        list(APPEND _enable HIP)
      endif()
    endif()
  endforeach()
  if(_unused)
    list(JOIN _set ";" _targets)
    list(JOIN _enable " or " _langs_text)
    list(TRANSFORM _enable PREPEND "enable_language(")
    list(TRANSFORM _enable APPEND ")")
    list(JOIN _enable " or " _enable)
    message(WARNING "OFFCC_OFFLOAD_ARCH=${_unused} is used by no compile: "
      "GPU architectures reach OpenMP only through a GPU triple of OFFCC_OPENMP_TARGETS, "
      "and CUDA and HIP sources only in a project that enables those languages. "
      "For OpenMP offload also set -DOFFCC_OPENMP_TARGETS=\"${_targets}\" "
      "(with x86_64-pc-linux-gnu, to offload to the host as well), which adds -fopenmp "
      "and the offload flags; for ${_langs_text} sources, call ${_enable} in the project")
  endif()
endfunction()
if(_offcc_unused_archs AND NOT _offcc_in_try_compile AND NOT CMAKE_SCRIPT_MODE_FILE)
  _offcc_defer_once(_OFFCC_UNUSED_ARCHS "${_offcc_unused_archs}" _offcc_check_unused_archs)
endif()

if(_offcc_cuda_archs AND NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${_offcc_cuda_archs}")
endif()
if(_offcc_hip_archs AND NOT DEFINED CMAKE_HIP_ARCHITECTURES)
  set(CMAKE_HIP_ARCHITECTURES "${_offcc_hip_archs}")
endif()
