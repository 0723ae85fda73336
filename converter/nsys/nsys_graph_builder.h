// From an nsys export's tables to one Kineto trace per GPU and process, the
// intermediate the Kineto-only import already turns into a graph
// (converter/kineto_only/kineto_only_import.h). Why this intermediate rather
// than nodes built here: an export holds the same facts as a Kineto trace (host
// ranges on threads, runtime calls, GPU activity linked by correlation id,
// stream waits) under other names, and the Kineto path already nests host ops,
// links launches, orders streams, derives sync edges, classifies collectives
// and reads steps; building nodes here would be a second copy of all that.
// The trace is built in memory (KinetoTrace's builder interface), never
// written as JSON.
//
// Mapping: NVTX ranges (PyTorch's emit_nvtx ranges with their `, seq = ...,
// op_id = ...` tail cut, NCCL's own ranges, user ranges) are CPU ops, and
// `ProfilerStep#N` ranges step markers; a runtime call outside every NVTX
// range on its thread stands as a host op of its own (an export without NVTX
// would otherwise have no host ops); kernels, memcpys and memsets keep
// device, stream, correlation id, launch dims and bytes; stream waits become
// the cuda_sync records Kineto writes. NCCL kernels are collectives through
// the usual path: their launching c10d::/record_param_comms ranges where
// emit_nvtx recorded them, else their kernel name.
#ifndef CONVERTER_NSYS_NSYS_GRAPH_BUILDER_H_
#define CONVERTER_NSYS_NSYS_GRAPH_BUILDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "converter/kineto/kineto_trace.h"
#include "converter/nsys/nsys_tables.h"

namespace et::nsys {

struct NsysGraphStats {
  int64_t kernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  int64_t runtime_calls = 0;
  int64_t nvtx_ranges = 0;
  int64_t lone_runtime_ops = 0;  // runtime calls standing as host ops
  int64_t nccl_kernels = 0;
  // NCCL kernels whose message size the export does not hold (no NCCL NVTX
  // payload): written with comm_size 0.
  int64_t nccl_size_unknown = 0;
  int64_t stream_waits = 0;
};

// One graph: a GPU as used by one process.
struct NsysGraph {
  int64_t pid = -1;
  int64_t device = -1;
  int rank = 0;  // position in (device, pid) order
  std::shared_ptr<const kineto::KinetoTrace> trace;
  NsysGraphStats stats;
};

// The graphs of an export: one per (device, process) pair with GPU activity,
// in (device, pid) order; ranks are that order's positions.
struct NsysGraphKey {
  int64_t device = -1;
  int64_t pid = -1;
  int rank = 0;
};
std::vector<NsysGraphKey> ListNsysGraphs(const NsysTables& tables);

// The graph of `key`, its trace built. One at a time: a graph's trace is as
// large as its share of the export, so building every graph before converting
// the first would hold them all at once.
NsysGraph BuildNsysGraph(const NsysTables& tables, const NsysGraphKey& key);

}  // namespace et::nsys

#endif  // CONVERTER_NSYS_NSYS_GRAPH_BUILDER_H_
