// NCCL communicators and calls; see nccl_collective.h.
#include "replay/nccl_collective.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/comm_type.h"
#include "replay/cuda_status.h"

namespace et::replay {
namespace {

ncclDataType_t NcclType(Dtype type) {
  switch (type) {
    case Dtype::kFloat32:
      return ncclFloat32;
    case Dtype::kFloat16:
      return ncclFloat16;
    case Dtype::kBFloat16:
      return ncclBfloat16;
    case Dtype::kFloat64:
      return ncclFloat64;
    case Dtype::kInt8:
      return ncclInt8;
    case Dtype::kUInt8:
    case Dtype::kBool:
      return ncclUint8;
    case Dtype::kInt32:
      return ncclInt32;
    case Dtype::kInt64:
      return ncclInt64;
    default:  // not in a plan: op_classifier.cc keeps replayable types only
      return ncclUint8;
  }
}

absl::Status InitComm(MPI_Comm mpi_comm, ncclComm_t* out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(mpi_comm, &rank);
  MPI_Comm_size(mpi_comm, &size);
  // The id travels with rank 0's result, so that a failed ncclGetUniqueId
  // fails every member instead of leaving them in the broadcast.
  struct {
    int ok;
    ncclUniqueId id;
  } root = {1, {}};
  if (rank == 0) root.ok = ncclGetUniqueId(&root.id) == ncclSuccess;
  RETURN_IF_ERROR(MpiStatus(
      MPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, mpi_comm), "MPI_Bcast"));
  if (!root.ok) {
    return absl::InternalError(
        "ncclGetUniqueId failed on the group's first rank");
  }
  RETURN_IF_NCCL_ERROR(ncclCommInitRank(out, size, root.id, rank));
  return absl::OkStatus();
}

// All-to-all, gather and scatter as grouped point-to-point transfers of `chunk`
// bytes.
absl::Status GroupedTransfers(ChakraProtoMsg::CollectiveCommType type,
                              size_t chunk, ncclComm_t comm, int root,
                              const char* send, char* recv,
                              cudaStream_t stream) {
  int rank = 0, n = 1;
  RETURN_IF_NCCL_ERROR(ncclCommUserRank(comm, &rank));
  RETURN_IF_NCCL_ERROR(ncclCommCount(comm, &n));
  RETURN_IF_NCCL_ERROR(ncclGroupStart());
  // A failed enqueue still ends the group (NCCL's group state is per thread).
  ncclResult_t result = ncclSuccess;
  for (int peer = 0; peer < n && result == ncclSuccess; ++peer) {
    const bool to_peer = type == ChakraProtoMsg::ALL_TO_ALL ||
                         (type == ChakraProtoMsg::SCATTER && rank == root) ||
                         (type == ChakraProtoMsg::GATHER && peer == root);
    const bool from_peer = type == ChakraProtoMsg::ALL_TO_ALL ||
                           (type == ChakraProtoMsg::GATHER && rank == root) ||
                           (type == ChakraProtoMsg::SCATTER && peer == root);
    const size_t send_offset =
        type == ChakraProtoMsg::GATHER ? 0 : peer * chunk;
    const size_t recv_offset =
        type == ChakraProtoMsg::SCATTER ? 0 : peer * chunk;
    if (to_peer)
      result =
          ncclSend(send + send_offset, chunk, ncclUint8, peer, comm, stream);
    if (from_peer && result == ncclSuccess)
      result =
          ncclRecv(recv + recv_offset, chunk, ncclUint8, peer, comm, stream);
  }
  const ncclResult_t end = ncclGroupEnd();
  RETURN_IF_NCCL_ERROR(result);
  RETURN_IF_NCCL_ERROR(end);
  return absl::OkStatus();
}

}  // namespace

NcclGroups::~NcclGroups() {
  for (ncclComm_t c : groups_) {
    if (c != nullptr && c != world_) ncclCommDestroy(c);
  }
  if (world_ != nullptr) ncclCommDestroy(world_);
}

void NcclGroups::Abort() {
  for (ncclComm_t& c : groups_) {
    if (c != nullptr && c != world_) ncclCommAbort(c);
    c = nullptr;
  }
  if (world_ != nullptr) ncclCommAbort(world_);
  world_ = nullptr;
}

absl::Status NcclGroups::Init(const MpiWorld& world, int group_count) {
  RETURN_IF_ERROR(InitComm(MPI_COMM_WORLD, &world_));
  groups_.assign(group_count, nullptr);
  for (int g = 0; g < group_count; ++g) {
    MPI_Comm mpi_comm = world.comm(g);
    if (mpi_comm == MPI_COMM_NULL)
      continue;  // not a member: no collective call here
    RETURN_IF_ERROR(InitComm(mpi_comm, &groups_[g]));
  }
  return absl::OkStatus();
}

absl::Status RunNcclOp(ReplayOpKind kind, const CommSpec& spec, ncclComm_t comm,
                       int root, const void* send, void* recv,
                       cudaStream_t stream) {
  const ncclDataType_t type = NcclType(spec.dtype);
  const size_t elem = ElementBytes(spec.dtype);
  const size_t count = (static_cast<size_t>(spec.bytes) + elem - 1) / elem;
  if (kind == ReplayOpKind::kSend) {
    RETURN_IF_NCCL_ERROR(
        ncclSend(send, spec.bytes, ncclUint8, spec.peer, comm, stream));
    return absl::OkStatus();
  }
  if (kind == ReplayOpKind::kRecv) {
    RETURN_IF_NCCL_ERROR(
        ncclRecv(recv, spec.bytes, ncclUint8, spec.peer, comm, stream));
    return absl::OkStatus();
  }
  int n = 1;
  RETURN_IF_NCCL_ERROR(ncclCommCount(comm, &n));
  const size_t chunk_count = (count + n - 1) / n;
  switch (spec.type) {
    case ChakraProtoMsg::ALL_REDUCE:
      RETURN_IF_NCCL_ERROR(
          ncclAllReduce(send, recv, count, type, ncclSum, comm, stream));
      break;
    case ChakraProtoMsg::REDUCE:
      RETURN_IF_NCCL_ERROR(
          ncclReduce(send, recv, count, type, ncclSum, root, comm, stream));
      break;
    case ChakraProtoMsg::BROADCAST:
      RETURN_IF_NCCL_ERROR(
          ncclBroadcast(send, recv, count, type, root, comm, stream));
      break;
    case ChakraProtoMsg::ALL_GATHER:
      RETURN_IF_NCCL_ERROR(
          ncclAllGather(send, recv, count, type, comm, stream));
      break;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      RETURN_IF_NCCL_ERROR(ncclReduceScatter(send, recv, chunk_count, type,
                                             ncclSum, comm, stream));
      break;
    case ChakraProtoMsg::ALL_TO_ALL:
    case ChakraProtoMsg::SCATTER:
      return GroupedTransfers(spec.type, chunk_count * elem, comm, root,
                              static_cast<const char*>(send),
                              static_cast<char*>(recv), stream);
    case ChakraProtoMsg::GATHER:
      return GroupedTransfers(spec.type, count * elem, comm, root,
                              static_cast<const char*>(send),
                              static_cast<char*>(recv), stream);
    case ChakraProtoMsg::BARRIER:
      // NCCL has no barrier: a one-element all-reduce synchronises the ranks
      // the same way.
      RETURN_IF_NCCL_ERROR(
          ncclAllReduce(send, recv, 1, ncclFloat32, ncclSum, comm, stream));
      break;
    default:
      return absl::UnimplementedError(absl::StrFormat(
          "collective %s has no NCCL equivalent", CommTypeName(spec.type)));
  }
  return absl::OkStatus();
}

}  // namespace et::replay
