// The umbrella header: everything a C++ user of evoxc needs.
#pragma once

#include "evoxc/core/device.h"
#include "evoxc/core/dim.h"
#include "evoxc/core/dtype.h"
#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/core/shape.h"
#include "evoxc/core/tensor.h"
#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/trace.h"
