// The CUDA, cuSPARSE and cuBLAS checks live in core/cuda_checks.hpp.
#pragma once

#include "core/cuda_checks.hpp"
