#pragma once
/// @file
/// XXH3 from libxxhash, with its functions inlined: hashing a 4- or 8-byte
/// value is a few instructions, and a call per value would dominate. The
/// inlined functions compute exactly what the library does.

#define XXH_INLINE_ALL
#include <xxhash.h>
