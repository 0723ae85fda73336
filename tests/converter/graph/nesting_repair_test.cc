// The call-tree repair around collective work records (converter/
// nesting_repair.h): on ops made the way PyTorch's observer makes them from a
// sequence of starts and ends, and on real traces, damaged and clean.
#include "converter/graph/nesting_repair.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

// PyTorch 1.13's ExecutionGraphObserver on one thread: an op gets the top of
// the thread's stack as parent when it starts and is written when it ends,
// and any end pops the top. A work record's start and end come from the
// backend's worker at other moments but use the calling thread's stack.
class Observer {
 public:
  explicit Observer(StringPool* pool) : pool_(pool) {
    ops_.push_back(Make(kRoot, "[pytorch|profiler|execution_graph|thread]", 1));
    stack_.push_back(kRoot);
  }
  // Starts `name`; returns its id.
  uint64_t Start(const std::string& name) {
    const uint64_t id = next_id_++;
    open_[id] = Make(id, name, stack_.back());
    stack_.push_back(id);
    true_parent_[id] = true_stack_.empty() ? kRoot : true_stack_.back();
    if (!absl::StartsWith(name, "gloo:")) true_stack_.push_back(id);
    return id;
  }
  // Ends op `id` (the worker ends a work record whenever it is done).
  void End(uint64_t id) {
    stack_.pop_back();  // the top, whichever op that is
    ops_.push_back(open_[id]);
    if (!absl::StartsWith(pool_->Get(open_[id].name), "gloo:"))
      true_stack_.pop_back();
  }
  std::vector<HostOp>& ops() { return ops_; }  // file order
  uint64_t true_parent(uint64_t id) const { return true_parent_.at(id); }
  static constexpr uint64_t kRoot = 2;

 private:
  HostOp Make(uint64_t id, const std::string& name, uint64_t parent) {
    HostOp op;
    op.id = id;
    op.parent = parent;
    op.name = pool_->Intern(name);
    op.tid = 1;
    return op;
  }
  StringPool* pool_;
  uint64_t next_id_ = kRoot + 1;
  std::vector<HostOp> ops_;
  std::map<uint64_t, HostOp> open_;
  std::vector<uint64_t> stack_, true_stack_;
  std::map<uint64_t, uint64_t> true_parent_;
};

// The timing of the 2-rank gpt recording: the gloo worker starts the
// all-reduce's record after the backward op that issued it ended, and ends it
// during the optimizer step, which the observer then nests under the
// collective (and folds into it).
TEST(NestingRepairTest, OpsStartedUnderALateWorkRecordGetTheirTrueParent) {
  StringPool pool;
  Observer ob(&pool);
  const uint64_t step = ob.Start("ProfilerStep#0");
  // A forward pass, nested as recorded: the repair reads the file as an end
  // order only when nearly every recorded link says it is one.
  for (int layer = 0; layer < 20; ++layer) {
    const uint64_t linear = ob.Start("aten::linear");
    ob.End(ob.Start("aten::mm"));
    ob.End(linear);
  }
  const uint64_t backward = ob.Start("autograd::engine::evaluate_function");
  ob.End(ob.Start("c10d::allreduce_"));
  ob.End(backward);
  const uint64_t work = ob.Start("gloo:all_reduce");  // the worker, late
  const uint64_t optimizer = ob.Start("Optimizer.step#AdamW.step");
  const uint64_t addcdiv = ob.Start("aten::addcdiv_");
  ob.End(addcdiv);
  ob.End(work);  // pops the optimizer's entry
  const uint64_t mul = ob.Start("aten::mul_");
  ob.End(mul);
  ob.End(optimizer);  // pops the work record's entry
  ob.End(step);
  std::map<uint64_t, uint64_t> recorded;
  for (const HostOp& op : ob.ops()) recorded[op.id] = op.parent;
  ASSERT_EQ(recorded[optimizer], work);  // the damage the repair undoes
  ASSERT_EQ(recorded[mul], work);

  const NestingRepairStats stats =
      RepairCollectiveRecordNesting(&ob.ops(), pool);
  EXPECT_EQ(stats.threads_repaired, 1);
  EXPECT_EQ(stats.ops_reparented, 2);
  for (const HostOp& op : ob.ops()) {
    if (op.id == Observer::kRoot) continue;
    if (op.id == work) {
      EXPECT_EQ(op.parent, step);  // kept as recorded
    } else {
      EXPECT_EQ(op.parent, ob.true_parent(op.id)) << pool.Get(op.name);
    }
  }
}

// A work record started and ended while its call runs damages nothing: the
// trace is left as it is.
TEST(NestingRepairTest, AWorkRecordInsideItsCallChangesNothing) {
  StringPool pool;
  Observer ob(&pool);
  const uint64_t step = ob.Start("ProfilerStep#0");
  const uint64_t call = ob.Start("c10d::allreduce_");
  ob.End(ob.Start("gloo:all_reduce"));
  ob.End(call);
  ob.End(ob.Start("aten::add_"));
  ob.End(step);
  const std::vector<HostOp> before = ob.ops();
  const NestingRepairStats stats =
      RepairCollectiveRecordNesting(&ob.ops(), pool);
  EXPECT_EQ(stats.ops_reparented, 0);
  EXPECT_EQ(stats.threads_left_as_recorded, 0);
  for (size_t k = 0; k < before.size(); ++k)
    EXPECT_EQ(ob.ops()[k].parent, before[k].parent);
}

bool Repaired(const ConvertReport& report, const std::string& count) {
  for (const std::string& w : report.warnings) {
    if (absl::StrContains(w, "call tree repaired: " + count + " ops"))
      return true;
  }
  return false;
}

// Real traces: rank 2 of the bundled 4-rank DDP MLP recording nests eight ops
// (as_strided, copy_bucket_to_grad) under a gloo:all_reduce; its other ranks,
// NCCL's synchronous work records (which really enclose their copies), a
// single-process trace and a hand-written file in start order are left as
// they are.
TEST(NestingRepairTest, RealTracesRepairedWhereDamagedOnly) {
  auto r2 = ConvertAndLoad("pytorch-1.13-cpu/ddp_mlp_et_r2.json.gz");
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_TRUE(Repaired(r2->summary, "8"));
  for (const char* clean : {"pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz",
                            "chakra/allgather_2rank_et.1.0.2.json.gz",
                            "pytorch-1.13-cpu/tfm_small_et.json.gz",
                            "generated/golden_tiny_et.json"}) {
    SCOPED_TRACE(clean);
    auto c = ConvertAndLoad(clean);
    ASSERT_TRUE(c.ok()) << c.status();
    for (const std::string& w : c->summary.warnings)
      EXPECT_FALSE(absl::StrContains(w, "call tree")) << w;
  }
}

}  // namespace
}  // namespace et::convert
