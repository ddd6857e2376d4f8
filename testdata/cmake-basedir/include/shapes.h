// shapes.h: what the HIP and CUDA sources share.
#pragma once
#define BLOCK 64
