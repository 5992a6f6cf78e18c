// Compiles every system of the packet engine (engine/net) for the GPU, so CI proves from now on that they
// stay free of what device code cannot have (standard containers, virtual calls, exceptions, heap
// allocation). The CUDA backend issue launches them; here they are only built.
#include "net/node.h"

namespace orrery::cuda {

__global__ void process_nodes_kernel(net::NetView view, uint64_t step, const int64_t* window_end, uint32_t nodes) {
    const uint32_t n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < nodes) net::process_node(view, n, net::StepClock{step, window_end[view.node_experiment[n]]});
}

}  // namespace orrery::cuda
