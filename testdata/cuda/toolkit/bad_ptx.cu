// bad_ptx.cu: inline PTX that ptxas rejects (exit status 255).
__global__ void k(int *p) { asm volatile("bogus.instr %0;" ::"r"(*p)); }
