// Included first by the files whose floating-point results must equal another program's (the PushT
// port: pymunk, pygame, numpy): no fused multiply-add, which GCC emits in C++ mode whenever the
// target has FMA (e.g. -march=native), while those programs round every product.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
