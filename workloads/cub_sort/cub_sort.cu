// arch: sm_80
// cccl: CUB 2.8 of CUDA 12.9's CCCL (scripts/build-workloads.sh)
// CUB's block-wide and device-wide primitives, unmodified library code compiled from the
// headers of CUDA 12.9's CCCL, for sm_80:
//
//   block:  a kernel of our own sorts 1,024-pair tiles with cub::BlockLoad,
//           cub::BlockRadixSort and cub::BlockStore (128 threads x 8 pairs, warp-transposed
//           loads and stores);
//   sort:   cub::DispatchRadixSort (what DeviceRadixSort::SortPairs calls) sorts every pair
//           by key: CUB's onesweep radix sort (a histogram kernel, an exclusive sum and one
//           pass per 8 bits with decoupled look-back between tiles);
//   scan:   cub::DeviceScan::ExclusiveSum of the sorted keys' low bytes;
//   reduce: cub::DeviceReduce::Sum of the keys.
//
// The sort runs under CUB's own sm_80 policy except for two tile sizes, so that every
// kernel fits every regsim GPU. CUB tunes its onesweep tile to 384 threads x 21 keys:
// 33,280 bytes of static shared memory, more than the 32 KB per SM of a small GPU such as
// rtx2060-scaled, and 384 threads of about 94 registers, more than the 32,768 registers a
// Fermi block may use when registers per thread are not capped (gpgpusim-gtx480). The
// policy below keeps CUB's 20-odd keys per thread and every other choice, and takes
// 256 threads x 20 keys per onesweep tile (21,504 bytes). Its single-tile kernel, 256
// threads x 19 keys (33,856 bytes, mostly 33 digit counters per thread), becomes 128 x 19
// (16,928 bytes). Everything is checked exactly against the host: values are the items'
// indices, so a stable sort has one right answer.
#include <algorithm>
#include <vector>

#include <cub/cub.cuh>

#include "../common/workload.h"

using Key = unsigned;
using Value = unsigned;
using Offset = unsigned;

// CUB's sm_80 radix-sort policy with tiles that fit 32 KB of shared memory; every other
// policy is CUB's.
struct SortPolicyHub {
    using Cub = cub::detail::radix::policy_hub<Key, Value, Offset>;
    struct Policy800 : Cub::Policy800, cub::ChainedPolicy<800, Policy800, Policy800> {
        using cub::ChainedPolicy<800, Policy800, Policy800>::ActivePolicy;
        using cub::ChainedPolicy<800, Policy800, Policy800>::Invoke;
        using OnesweepPolicy = cub::AgentRadixSortOnesweepPolicy<
            256, 20, Key, 1, cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY,
            cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::RADIX_SORT_STORE_DIRECT,
            Cub::Policy800::ONESWEEP_RADIX_BITS>;
        using SingleTilePolicy = cub::AgentRadixSortDownsweepPolicy<
            128, 19, Key, cub::BLOCK_LOAD_DIRECT, cub::LOAD_LDG, cub::RADIX_RANK_MEMOIZE,
            cub::BLOCK_SCAN_WARP_SCANS, Cub::Policy800::SINGLE_TILE_RADIX_BITS>;
    };
    using MaxPolicy = Policy800;
};
using SortPairs = cub::DispatchRadixSort<false, Key, Value, Offset, SortPolicyHub>;

constexpr int kBlockThreads = 128;
constexpr int kItemsPerThread = 8;
constexpr int kTile = kBlockThreads * kItemsPerThread;

// Sorts each tile of kTile (key, value) pairs by key, stably; a short last tile is padded
// with the largest key, which sorts after every real key (keys are below 2^31).
__global__ void sort_tiles(const Key* keys_in, const Value* values_in, Key* keys_out,
                           Value* values_out, int n) {
    using Load = cub::BlockLoad<unsigned, kBlockThreads, kItemsPerThread,
                                cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<Key, kBlockThreads, kItemsPerThread, Value>;
    using Store = cub::BlockStore<unsigned, kBlockThreads, kItemsPerThread,
                                  cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Sort::TempStorage sort;
        typename Store::TempStorage store;
    } temp;

    const int base = blockIdx.x * kTile;
    const int valid = min(kTile, n - base);
    Key keys[kItemsPerThread];
    Value values[kItemsPerThread];
    Load(temp.load).Load(keys_in + base, keys, valid, 0xffffffffu);
    __syncthreads();
    Load(temp.load).Load(values_in + base, values, valid, 0u);
    __syncthreads();
    Sort(temp.sort).Sort(keys, values);
    __syncthreads();
    Store(temp.store).Store(keys_out + base, keys, valid);
    __syncthreads();
    Store(temp.store).Store(values_out + base, values, valid);
}

// The low byte of every key, the input of the scan.
__global__ void low_bytes(const Key* keys, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (int)(keys[i] & 0xffu);
}

// Runs a CUB device call twice, the first time for the temporary storage it needs.
template <typename Call>
static void with_temp_storage(Call call) {
    size_t bytes = 0;
    CUDA_CHECK(call(nullptr, bytes));
    void* temp = nullptr;
    CUDA_CHECK(cudaMalloc(&temp, bytes));
    CUDA_CHECK(call(temp, bytes));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFree(temp));
}

int main(int argc, char** argv) {
    const bool large = parse_large_flag(argc, argv);
    const int n = large ? 200000 : 24000;

    Lcg rng(24);
    std::vector<Key> keys(n);
    std::vector<Value> values(n);
    // Keys from a small range as well as a large one, so that equal keys test stability.
    for (int i = 0; i < n; ++i) {
        keys[i] = (i % 3 == 0) ? rng.below(64) : rng.next() >> 1;
        values[i] = (Value)i;
    }

    Key *d_keys_in, *d_keys_out, *d_tile_keys;
    Value *d_values_in, *d_values_out, *d_tile_values;
    int *d_bytes, *d_scan;
    Key* d_sum;
    CUDA_CHECK(cudaMalloc(&d_keys_in, sizeof(Key) * n));
    CUDA_CHECK(cudaMalloc(&d_keys_out, sizeof(Key) * n));
    CUDA_CHECK(cudaMalloc(&d_tile_keys, sizeof(Key) * n));
    CUDA_CHECK(cudaMalloc(&d_values_in, sizeof(Value) * n));
    CUDA_CHECK(cudaMalloc(&d_values_out, sizeof(Value) * n));
    CUDA_CHECK(cudaMalloc(&d_tile_values, sizeof(Value) * n));
    CUDA_CHECK(cudaMalloc(&d_bytes, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_scan, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&d_sum, sizeof(Key)));
    CUDA_CHECK(cudaMemcpy(d_keys_in, keys.data(), sizeof(Key) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_values_in, values.data(), sizeof(Value) * n, cudaMemcpyHostToDevice));

    // Block-wide: sort every tile.
    sort_tiles<<<(n + kTile - 1) / kTile, kBlockThreads>>>(d_keys_in, d_values_in, d_tile_keys,
                                                           d_tile_values, n);
    CUDA_CHECK_LAUNCH();

    // Device-wide: sort everything (into the _out buffers: not overwriting the input).
    cub::DoubleBuffer<Key> key_buffers(d_keys_in, d_keys_out);
    cub::DoubleBuffer<Value> value_buffers(d_values_in, d_values_out);
    with_temp_storage([&](void* temp, size_t& bytes) {
        return SortPairs::Dispatch(temp, bytes, key_buffers, value_buffers, (Offset)n, 0,
                                   8 * (int)sizeof(Key), false, 0);
    });
    const Key* d_sorted_keys = key_buffers.Current();
    const Value* d_sorted_values = value_buffers.Current();

    low_bytes<<<(n + 255) / 256, 256>>>(d_sorted_keys, d_bytes, n);
    CUDA_CHECK_LAUNCH();
    with_temp_storage([&](void* temp, size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(temp, bytes, d_bytes, d_scan, n);
    });
    with_temp_storage([&](void* temp, size_t& bytes) {
        return cub::DeviceReduce::Sum(temp, bytes, d_keys_in, d_sum, n);
    });

    std::vector<Key> tile_keys(n), sorted_keys(n);
    std::vector<Value> tile_values(n), sorted_values(n);
    std::vector<int> scan(n);
    Key sum = 0;
    CUDA_CHECK(cudaMemcpy(tile_keys.data(), d_tile_keys, sizeof(Key) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(tile_values.data(), d_tile_values, sizeof(Value) * n,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sorted_keys.data(), d_sorted_keys, sizeof(Key) * n,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sorted_values.data(), d_sorted_values, sizeof(Value) * n,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(scan.data(), d_scan, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof(Key), cudaMemcpyDeviceToHost));

    // The reference: indices ordered by (key, index), per tile and over everything.
    auto by_key = [&](Value a, Value b) { return keys[a] < keys[b] || (keys[a] == keys[b] && a < b); };
    std::vector<Value> order(values);
    for (int base = 0; base < n; base += kTile) {
        std::sort(order.begin() + base, order.begin() + std::min(n, base + kTile), by_key);
    }
    for (int i = 0; i < n; ++i) {
        if (tile_values[i] != order[i] || tile_keys[i] != keys[order[i]]) {
            return report_fail("tile sort: item %d is (%u, %u), expected (%u, %u)", i,
                               tile_keys[i], tile_values[i], keys[order[i]], order[i]);
        }
    }
    std::sort(order.begin(), order.end(), by_key);
    for (int i = 0; i < n; ++i) {
        if (sorted_values[i] != order[i] || sorted_keys[i] != keys[order[i]]) {
            return report_fail("radix sort: item %d is (%u, %u), expected (%u, %u)", i,
                               sorted_keys[i], sorted_values[i], keys[order[i]], order[i]);
        }
    }
    int running = 0;
    for (int i = 0; i < n; ++i) {
        if (scan[i] != running) {
            return report_fail("exclusive sum: item %d is %d, expected %d", i, scan[i], running);
        }
        running += (int)(keys[order[i]] & 0xffu);
    }
    Key expected_sum = 0;
    for (Key k : keys) expected_sum += k;
    if (sum != expected_sum) return report_fail("sum is %u, expected %u", sum, expected_sum);

    CUDA_CHECK(cudaFree(d_keys_in));
    CUDA_CHECK(cudaFree(d_keys_out));
    CUDA_CHECK(cudaFree(d_tile_keys));
    CUDA_CHECK(cudaFree(d_values_in));
    CUDA_CHECK(cudaFree(d_values_out));
    CUDA_CHECK(cudaFree(d_tile_values));
    CUDA_CHECK(cudaFree(d_bytes));
    CUDA_CHECK(cudaFree(d_scan));
    CUDA_CHECK(cudaFree(d_sum));
    return report_pass();
}
