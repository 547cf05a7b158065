// One mbarrier.try_wait.parity on a shared::cta mbarrier (sm_90): true once the phase
// of parity `parity` has completed. The test programs spin on it.
#pragma once

__device__ inline bool try_wait(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}
