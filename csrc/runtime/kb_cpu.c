/* kb_cpu.c -- what the processor offers, asked once per process. */
#include "kb_internal.h"

int kb_cpu_avx512(void)
{
#if defined(KB_HAVE_AVX512)
    static _Atomic int known;  /* 0: not asked yet; else 1 + the answer */
    int answer = known;
    if (answer == 0) {
        __builtin_cpu_init();
        answer = 1 + (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl"));
        known = answer;
    }
    return answer - 1;
#else
    return 0;
#endif
}
