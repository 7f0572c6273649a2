// The fp64 tensor-core rate of each mma.sync shape on this GPU: m8n8k4
// (sm_80) against Hopper's m16n8k4, m16n8k8 and m16n8k16 (sm_90). Each warp
// runs `chains` independent accumulators through `iterations` MMAs on
// register operands, so the number is the pipe's rate, not memory's.
//   nvcc -O3 -arch=sm_90 -o dmma_rate bench/micro/dmma_rate.cu && ./dmma_rate
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "dev_check.cuh"

constexpr int chains = 8, iterations = 4096;

__device__ __forceinline__ void mma884(double (&d)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
}
__device__ __forceinline__ void mma1684(double (&d)[4], const double (&a)[2], double b) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(b));
}
__device__ __forceinline__ void mma1688(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
__device__ __forceinline__ void mma16816(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
        "d"(b[2]), "d"(b[3]));
}

template <int Shape>
__global__ void rate_kernel(const double* in, double* out) {
  const int lane = threadIdx.x % 32;
  double a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = in[(lane * 8 + i) % 64];
  for (int i = 0; i < 4; ++i) b[i] = in[(lane * 4 + i + 7) % 64];
  double acc[chains][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < chains; ++c) {
      if constexpr (Shape == 0) {
        double d[2] = {acc[c][0], acc[c][1]};
        mma884(d, a[c % 8], b[c % 4]);
        acc[c][0] = d[0], acc[c][1] = d[1];
      } else if constexpr (Shape == 1) {
        const double aa[2] = {a[c % 8], a[(c + 1) % 8]};
        mma1684(acc[c], aa, b[c % 4]);
      } else if constexpr (Shape == 2) {
        const double aa[4] = {a[0], a[1], a[2], a[3]}, bb[2] = {b[0], b[1]};
        mma1688(acc[c], aa, bb);
      } else {
        mma16816(acc[c], a, b);
      }
    }
  }
  double s = 0;
  for (int c = 0; c < chains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int Shape>
void run(const char* name, double flops_per_mma, int sms, const double* in, double* out) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int warps_per_sm : {4, 8, 16}) {
    const int blocks = sms * warps_per_sm / 4;
    rate_kernel<Shape><<<blocks, 128>>>(in, out);  // warm-up
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start));
    rate_kernel<Shape><<<blocks, 128>>>(in, out);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double flops = double(blocks) * 4 * chains * iterations * flops_per_mma;
    std::printf("%-10s %2d warps/SM  %8.3f ms  %6.1f TFLOP/s\n", name, warps_per_sm, ms, flops / ms / 1e9);
  }
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  double *in, *out;
  CHECK(cudaMalloc(&in, 64 * sizeof(double)));
  CHECK(cudaMalloc(&out, std::size_t(p.multiProcessorCount) * 16 * 32 * sizeof(double)));
  double h[64];
  for (int i = 0; i < 64; ++i) h[i] = 1e-3 * (i + 1);
  CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  run<0>("m8n8k4", 2.0 * 8 * 8 * 4, p.multiProcessorCount, in, out);
  run<1>("m16n8k4", 2.0 * 16 * 8 * 4, p.multiProcessorCount, in, out);
  run<2>("m16n8k8", 2.0 * 16 * 8 * 8, p.multiProcessorCount, in, out);
  run<3>("m16n8k16", 2.0 * 16 * 8 * 16, p.multiProcessorCount, in, out);
  return 0;
}
