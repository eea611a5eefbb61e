# Warnings from upstream CMake files that a kvsearch user can do nothing about, silenced here and
# only these (every other message passes through unchanged):
# - "library kineto not found": PyPI's torch wheels ship no kineto (LibTorch's profiler), and
#   TorchConfig.cmake warns for every project that finds them; kvsearch does not use the profiler.
# - "pytorch is not compatible with `CMAKE_CUDA_ARCHITECTURES`": Caffe2's cuda.cmake warns when
#   CMake's CUDA support has defined that variable; the architectures come from
#   TORCH_CUDA_ARCH_LIST (the top-level CMakeLists.txt sets it), as the warning itself advises.
function(message)
  if(ARGC GREATER 1 AND ARGV0 STREQUAL "WARNING")
    list(SUBLIST ARGV 1 -1 parts)
    string(JOIN "" text ${parts})
    if(text MATCHES "^library kineto not found"
       OR text MATCHES "^pytorch is not compatible with `CMAKE_CUDA_ARCHITECTURES`")
      return()
    endif()
  endif()
  _message(${ARGV})
endfunction()
