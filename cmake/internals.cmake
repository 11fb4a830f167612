# Whose headers a target sees (issue 13, item 5). A program's folder holds
# its internal headers: the program's own targets include it PRIVATE, so
# nothing that links them sees those headers. No program includes another's
# headers; what they share is in common/, whose libraries hand on their
# folders PUBLIC. A white-box test names the programs whose internals it
# reaches into, so the build, not the order of include folders, decides
# what it can include.

# The programs' folders: the services, the guest daemon and the CLI.
set(AIRLOCK_PROGRAMS vmhost scheduler gateway egress vault guest cli)

# airlock_test_internals(<target> <program>...): target includes the
# internal headers of each program named.
function(airlock_test_internals target)
  foreach(program IN LISTS ARGN)
    if(NOT program IN_LIST AIRLOCK_PROGRAMS)
      message(FATAL_ERROR "airlock_test_internals(${target}): ${program} is none of "
                          "AIRLOCK_PROGRAMS (${AIRLOCK_PROGRAMS})")
    endif()
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/${program})
  endforeach()
endfunction()

# Fails the configuration when a target of dir or below hands a folder of a
# program on to what links it (a PUBLIC or INTERFACE include directory):
# its internals would reach tests that never named them.
function(airlock_check_internals_private dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(handed_on ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT handed_on)
      continue()
    endif()
    foreach(folder IN LISTS handed_on)
      foreach(program IN LISTS AIRLOCK_PROGRAMS)
        set(internals ${PROJECT_SOURCE_DIR}/${program})
        cmake_path(IS_PREFIX internals "${folder}" NORMALIZE inside)
        if(inside)
          message(FATAL_ERROR "${target} hands on ${folder}, internals of ${program}: include "
                              "it PRIVATE; a test names it with airlock_test_internals")
        endif()
      endforeach()
    endforeach()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    airlock_check_internals_private(${subdir})
  endforeach()
endfunction()
