// Recorded collective -> MPI call; see mpi_collective.h.
#include "replay/mpi_collective.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "model/comm_type.h"
#include "replay/mpi_world.h"

namespace et::replay {
namespace {

// MPI has no 16-bit float type; reductions over fp16/bf16 payloads use 16-bit
// integers, which move and add the same number of bytes (the values are zeros
// anyway).
MPI_Datatype MpiType(Dtype type) {
  switch (type) {
    case Dtype::kFloat32:
      return MPI_FLOAT;
    case Dtype::kFloat64:
      return MPI_DOUBLE;
    case Dtype::kFloat16:
    case Dtype::kBFloat16:
      return MPI_SHORT;
    case Dtype::kInt8:
      return MPI_SIGNED_CHAR;
    case Dtype::kUInt8:
    case Dtype::kBool:
      return MPI_UNSIGNED_CHAR;
    case Dtype::kInt32:
      return MPI_INT;
    case Dtype::kInt64:
      return MPI_LONG_LONG;
    default:  // not in a plan: op_classifier.cc keeps replayable types only
      return MPI_BYTE;
  }
}

// Elements for `bytes`, rounded up so that no recorded byte is dropped.
int Count(int64_t bytes, Dtype type) {
  const int64_t elem = ElementBytes(type);
  return static_cast<int>((bytes + elem - 1) / elem);
}

}  // namespace

CommBufferBytes BuffersFor(const CommSpec& spec, int ranks) {
  const int64_t elem = ElementBytes(spec.dtype);
  const int64_t bytes =
      static_cast<int64_t>(Count(spec.bytes, spec.dtype)) * elem;
  const int64_t n = std::max(ranks, 1);
  const int64_t chunk = (Count(spec.bytes, spec.dtype) + n - 1) / n * elem;
  switch (spec.type) {
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:
      return {bytes, bytes * n};
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
    case ChakraProtoMsg::SCATTER:
      return {chunk * n, chunk};
    case ChakraProtoMsg::ALL_TO_ALL:
      return {chunk * n, chunk * n};
    case ChakraProtoMsg::BARRIER:
      return {0, 0};
    default:
      return {bytes, bytes};
  }
}

absl::Status RunMpiCollective(const CommSpec& spec, MPI_Comm comm, int root,
                              char* send, char* recv) {
  // MPI counts are int: a larger comm_size would wrap to a negative count.
  if (spec.bytes < 0 || spec.bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "comm_size %d does not fit an MPI count (at most 2^31-1 bytes)",
        spec.bytes));
  }
  int n = 1;
  MPI_Comm_size(comm, &n);
  const MPI_Datatype type = MpiType(spec.dtype);
  const int count = Count(spec.bytes, spec.dtype);
  const int chunk = (count + n - 1) / n;
  switch (spec.type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return MpiStatus(MPI_Allreduce(send, recv, count, type, MPI_SUM, comm),
                       "MPI_Allreduce");
    case ChakraProtoMsg::REDUCE:
      return MpiStatus(MPI_Reduce(send, recv, count, type, MPI_SUM, root, comm),
                       "MPI_Reduce");
    case ChakraProtoMsg::BROADCAST:
      return MpiStatus(MPI_Bcast(send, count, type, root, comm), "MPI_Bcast");
    case ChakraProtoMsg::ALL_GATHER:
      return MpiStatus(
          MPI_Allgather(send, count, type, recv, count, type, comm),
          "MPI_Allgather");
    case ChakraProtoMsg::GATHER:
      return MpiStatus(
          MPI_Gather(send, count, type, recv, count, type, root, comm),
          "MPI_Gather");
    case ChakraProtoMsg::SCATTER:
      return MpiStatus(
          MPI_Scatter(send, chunk, type, recv, chunk, type, root, comm),
          "MPI_Scatter");
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return MpiStatus(
          MPI_Reduce_scatter_block(send, recv, chunk, type, MPI_SUM, comm),
          "MPI_Reduce_scatter_block");
    case ChakraProtoMsg::ALL_TO_ALL:
      return MpiStatus(MPI_Alltoall(send, chunk, type, recv, chunk, type, comm),
                       "MPI_Alltoall");
    case ChakraProtoMsg::BARRIER:
      return MpiStatus(MPI_Barrier(comm), "MPI_Barrier");
    default:
      return absl::UnimplementedError(absl::StrFormat(
          "collective %s has no MPI equivalent", CommTypeName(spec.type)));
  }
}

}  // namespace et::replay
