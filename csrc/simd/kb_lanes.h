/*
 * kb_lanes.h -- private: includes KB_LANES_FILE once per vector width,
 * four lanes (kb_v4) and eight (kb_v8), with KB_V (doubles), KB_M (lane
 * masks: -1 or 0), KB_LANES and KB_VFN(name) (the name with its width's
 * prefix, kb_v4_ or kb_v8_) defined.  No include guard: each user includes
 * it with its own KB_LANES_FILE.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#define KB_V kb_v4
#define KB_M kb_m4
#define KB_LANES 4
#define KB_VFN(name) kb_v4_##name
#include KB_LANES_FILE
#undef KB_V
#undef KB_M
#undef KB_LANES
#undef KB_VFN

#define KB_V kb_v8
#define KB_M kb_m8
#define KB_LANES 8
#define KB_VFN(name) kb_v8_##name
#include KB_LANES_FILE
#undef KB_V
#undef KB_M
#undef KB_LANES
#undef KB_VFN
