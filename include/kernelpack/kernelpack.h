/* kernelpack: GPU tensor kernels for CUDA and ROCm behind one C API. */
#ifndef KERNELPACK_H
#define KERNELPACK_H

#include "core.h"
#include "device.h"
#include "tensor.h"
#include "ops.h"
#include "conv.h"
#include "spatial.h"
#include "indexing.h"
#include "sort.h"
#include "quantized.h"
#include "reduce.h"
#include "modules.h"
#include "user_kernels.h"

#endif
