// unresolved.cu: a kernel calling a device function defined nowhere.
// Without -fgpu-rdc ptxas fails ("Unresolved extern function"); with it,
// nvlink does at link time.
extern __device__ int helper(int);
__global__ void k(int *p) { *p = helper(*p); }
int main() {
  k<<<1, 1>>>(nullptr);
  return 0;
}
