# SPDX-License-Identifier: Apache-2.0
# The include layering of src/cuda (src/cuda/LAYERS.txt: which primitive may
# call which, engines and block/warp/util below) checked on every test run,
# with or without CUDA: tools/check_layers.py reads every #include there.
# Its self-test makes sure the check catches a bad include, so it cannot
# pass by checking nothing. Included from CMakeLists.txt when BUILD_TESTING.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cuda_layers
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py --root ${PROJECT_SOURCE_DIR})
  add_test(NAME cuda_layers_self_test
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py --self-test)
  set_tests_properties(cuda_layers cuda_layers_self_test PROPERTIES LABELS "gpuprim;unit" TIMEOUT 60)
else()
  message(WARNING "gpuprim: no Python 3 interpreter found: the src/cuda layer check (tools/check_layers.py) "
                  "is not registered as a test")
endif()
