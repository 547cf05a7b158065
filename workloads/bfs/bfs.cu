// Level-synchronous breadth-first search over a directed graph in CSR form. One launch
// per level: every thread checks whether its vertex is on the current frontier and, if
// so, labels its unvisited neighbours and raises a device flag. The host loop copies
// the flag back after each launch and stops when a level discovers nothing. Most edges
// are local (so the search takes many levels) and one in eight is a random long edge.
#include "../common/workload.h"

__global__ void bfs_level(int num_vertices, const int* __restrict__ row_start,
                          const int* __restrict__ adjacency, int* level, int current,
                          int* changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= num_vertices || level[v] != current) return;
    for (int e = row_start[v]; e < row_start[v + 1]; ++e) {
        int u = adjacency[e];
        // Several threads may label u in the same level; they all write the same value.
        if (level[u] < 0) {
            level[u] = current + 1;
            *changed = 1;
        }
    }
}

int main(int argc, char** argv) {
    bool large = parse_large_flag(argc, argv);
    int num_vertices = large ? 131072 : 8192;
    const int threads = 256;
    const int source = 0;

    Lcg rng(1001u);
    int* h_row_start = (int*)malloc(sizeof(int) * (num_vertices + 1));
    h_row_start[0] = 0;
    for (int v = 0; v < num_vertices; ++v) h_row_start[v + 1] = h_row_start[v] + (int)rng.below(7);
    int num_edges = h_row_start[num_vertices];
    int* h_adj = (int*)malloc(sizeof(int) * num_edges);
    for (int v = 0; v < num_vertices; ++v) {
        for (int e = h_row_start[v]; e < h_row_start[v + 1]; ++e) {
            int u;
            if (rng.below(8) == 0) {
                u = (int)rng.below(num_vertices);
            } else {
                u = v + (int)rng.below(65) - 32;
                u = (u % num_vertices + num_vertices) % num_vertices;
            }
            h_adj[e] = u;
        }
    }

    int* h_level = (int*)malloc(sizeof(int) * num_vertices);
    for (int v = 0; v < num_vertices; ++v) h_level[v] = -1;
    h_level[source] = 0;

    int *d_row_start, *d_adj, *d_level, *d_changed;
    CUDA_CHECK(cudaMalloc(&d_row_start, sizeof(int) * (num_vertices + 1)));
    CUDA_CHECK(cudaMalloc(&d_adj, sizeof(int) * num_edges));
    CUDA_CHECK(cudaMalloc(&d_level, sizeof(int) * num_vertices));
    CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_row_start, h_row_start, sizeof(int) * (num_vertices + 1),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_adj, h_adj, sizeof(int) * num_edges, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_level, h_level, sizeof(int) * num_vertices, cudaMemcpyHostToDevice));

    int blocks = (num_vertices + threads - 1) / threads;
    int launches = 0;
    // Each productive level labels at least one new vertex, so there are fewer than
    // num_vertices of them; the bound only guards against a broken device.
    for (int current = 0; current < num_vertices; ++current) {
        CUDA_CHECK(cudaMemset(d_changed, 0, sizeof(int)));
        bfs_level<<<blocks, threads>>>(num_vertices, d_row_start, d_adj, d_level, current, d_changed);
        CUDA_CHECK_LAUNCH();
        ++launches;
        int changed = 0;
        CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
        if (!changed) break;
    }
    int* h_result = (int*)malloc(sizeof(int) * num_vertices);
    CUDA_CHECK(cudaMemcpy(h_result, d_level, sizeof(int) * num_vertices, cudaMemcpyDeviceToHost));

    // Host reference: queue-based BFS.
    int* queue = (int*)malloc(sizeof(int) * num_vertices);
    int head = 0, tail = 0, max_level = 0;
    queue[tail++] = source;
    while (head < tail) {
        int v = queue[head++];
        for (int e = h_row_start[v]; e < h_row_start[v + 1]; ++e) {
            int u = h_adj[e];
            if (h_level[u] < 0) {
                h_level[u] = h_level[v] + 1;
                if (h_level[u] > max_level) max_level = h_level[u];
                queue[tail++] = u;
            }
        }
    }

    int result = -1;
    for (int v = 0; v < num_vertices; ++v) {
        if (h_result[v] != h_level[v]) {
            result = report_fail("level[%d] = %d, expected %d", v, h_result[v], h_level[v]);
            break;
        }
    }
    // Levels 0..max_level each discover the next one, and one more launch finds nothing.
    if (result < 0 && launches != max_level + 1) {
        result = report_fail("%d launches, expected %d", launches, max_level + 1);
    }

    CUDA_CHECK(cudaFree(d_row_start));
    CUDA_CHECK(cudaFree(d_adj));
    CUDA_CHECK(cudaFree(d_level));
    CUDA_CHECK(cudaFree(d_changed));
    free(h_row_start);
    free(h_adj);
    free(h_level);
    free(h_result);
    free(queue);
    return result < 0 ? report_pass() : result;
}
