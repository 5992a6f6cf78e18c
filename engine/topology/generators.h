#pragma once
// Fabric generators. Each takes parameters already validated by the scenario reader (engine/scenario) and
// lays nodes out hosts first, then NVSwitches, then switches tier by tier, with links in the reference's
// order (per pod, per ToR: host links, then uplinks; then the pod's upper-tier links).
#include "topology/fabric.h"

namespace orrery {

struct LinkClass {
    BitsPerSecond rate;
    Picoseconds delay;
};

// Servers of G GPUs joined by one NVSwitch each. gpus_per_server == 0: no NVLink domain.
struct NvlinkDomain {
    int gpus_per_server = 0;
    LinkClass link;
};

// 3-tier Clos: pods of ToRs and aggregation switches, and core switches. Agg a of every pod connects to
// cores [a·g, (a+1)·g) with g = cores / aggs_per_pod. A k-ary fat-tree is pods = k, tors = aggs = hosts = k/2,
// cores = (k/2)².
struct ThreeTierParams {
    int pods = 0, tors_per_pod = 0, aggs_per_pod = 0, hosts_per_tor = 0, cores = 0;
    LinkClass host, tier1, tier2;  // host–ToR, ToR–agg, agg–core
    NvlinkDomain nvlink;
};
ThreeTierParams fat_tree(int k, LinkClass host, LinkClass tier1, LinkClass tier2);

// Rail-optimized fat-tree: one NIC per GPU, NIC r of every server on rail r. Each rail has leaves of
// hosts_per_leaf servers; every leaf connects to every spine of its pod. Three tiers: pods of
// servers_per_pod servers, spine j of every pod connects to core group j of leaves_per_pod cores.
struct RailOptimizedParams {
    int gpus = 0, gpus_per_server = 0, hosts_per_leaf = 0, spines_per_pod = 0, tiers = 2, servers_per_pod = 0;
    LinkClass host, tier1, tier2;  // NIC–leaf, leaf–spine, spine–core
    NvlinkDomain nvlink;           // defaults to one domain per server
};

// 2-tier leaf-spine: every leaf has links_per_spine parallel links to every spine.
struct LeafSpineParams {
    int leaves = 0, spines = 0, hosts_per_leaf = 0, links_per_spine = 1;
    LinkClass host, tier1;
    NvlinkDomain nvlink;
};

struct SingleSwitchParams {
    int hosts = 0;
    LinkClass host;
    NvlinkDomain nvlink;
};

Fabric generate(const ThreeTierParams& p);
Fabric generate(const RailOptimizedParams& p);
Fabric generate(const LeafSpineParams& p);
Fabric generate(const SingleSwitchParams& p);

}  // namespace orrery
