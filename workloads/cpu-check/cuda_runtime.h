// Stands in for the toolkit's cuda_runtime.h when run.sh compiles a workload for the
// CPU: cuda_on_cpu.h, force-included first, already declares everything.
#pragma once
