// What each node of the model becomes in a replay (ReplayOp): the model's
// kind mapped onto what the backends run, its GEMM shape and collective spec
// with types the backends implement, and its recorded time. Every fact comes
// decoded from model/node_model (docs/node-model.md); nothing here reads an
// attribute or a shapes string. Stateless; thread-safe.
#ifndef REPLAY_OP_CLASSIFIER_H_
#define REPLAY_OP_CLASSIFIER_H_

#include "model/node_model.h"
#include "replay/replay_op.h"

namespace et::replay {

// The replay op for node `index` of `model`.
ReplayOp ClassifyNode(const NodeModel& model, NodeIndex index);

}  // namespace et::replay

#endif  // REPLAY_OP_CLASSIFIER_H_
