"""Result.memory_timeline against the report it comes from: on a CPU job
(the demo), an H100 trace (cuBLAS workspaces, activations) and the same at
another layout (ZeRO-2 at dp=8), the curve's largest value is the peak
et-sim --json reports, at the node it names, made of the parts it lists."""
import json

import pytest

import ettools
from conftest import ET_SIM, SHARED, run_tool

KINDS = ("parameters", "gradients", "optimizer_state", "activations",
         "temporaries", "comm_buffers", "other", "workspaces")


@pytest.fixture(scope="module")
def gpt2(workdir):
    """The H100 GPT-2 step of ../shared/traces, ET with its Kineto trace."""
    et = workdir / "memory_gpt2.et"
    ettools.convert(SHARED / "h100/gpt2_et.json.gz", et,
                    kineto=SHARED / "h100/gpt2_kineto.json.gz")
    return str(et)


def check_against_report(result, flags_for_et_sim):
    m = result.memory_timeline
    ranks = result.ranks
    assert len(m) > 0
    kinds = m[[k + "_bytes" for k in KINDS]].to_numpy()
    assert (kinds.sum(axis=1) == m["allocated_bytes"].to_numpy()).all()
    assert (kinds >= 0).all()
    ran = m["start_us"].notna()
    assert ran.any()
    assert (m.loc[ran, "end_us"] >= m.loc[ran, "start_us"]).all()
    # The same numbers from the tool itself, not from the Result.
    rc, out, err = run_tool(ET_SIM, *flags_for_et_sim, "--json")
    assert rc == 0, err
    report = json.loads(out)
    for row in report["ranks"]:
        first = row["ranks"][0]
        mine = m[m["rank"] == first].reset_index(drop=True)
        assert (mine["class_ranks"] == len(row["ranks"])).all()
        assert set(mine["device"].astype(str)) == {row["memory_device"]}
        # Exactly the peak, first reached at the node the report names.
        at = int(mine["allocated_bytes"].to_numpy().argmax())
        assert mine["allocated_bytes"][at] == row["peak_allocated_bytes"]
        assert mine["id"][at] == row["peak_node"]
        assert str(mine["name"][at]) == row["peak_node_name"]
        for kind, b in row["memory_parts"].items():
            assert mine[kind + "_bytes"][at] == b, kind
        assert mine["allocated_bytes"].min() >= row["baseline_bytes"]
        assert ranks[ranks["rank"] == first][
            "peak_allocated_bytes"].item() == row["peak_allocated_bytes"]
    return m


def test_memory_timeline_of_the_demo(demo):
    result = ettools.simulate(demo, ranks=4, host_time="recorded")
    m = check_against_report(result, [demo, "--ranks", "4", "--host-time",
                                      "recorded"])
    assert set(m["device"].astype(str)) == {"host"}
    assert sorted(set(m["rank"])) == sorted(
        r for row in result.to_dict()["ranks"] for r in row["ranks"][:1])


def test_memory_timeline_of_an_h100_step(gpt2):
    m = check_against_report(ettools.simulate(gpt2), [gpt2])
    assert set(m["device"].astype(str)) == {"cuda:0"}
    # What the H100 trace holds besides its tensors: cuBLAS's workspaces
    # (two threads x 32 MiB on compute capability 9.0) the whole time.
    assert (m["workspaces_bytes"] == 2 * 32 * 2**20).all()
    assert m["activations_bytes"].max() > 0


def test_memory_timeline_at_another_layout(gpt2):
    result = ettools.simulate(gpt2, layout="dp=8", dp_sync="zero2")
    m = check_against_report(result, [gpt2, "--layout", "dp=8",
                                      "--dp-sync", "zero2"])
    recorded = ettools.simulate(gpt2).memory_timeline
    # ZeRO-2 shards the optimizer state and the gradients over 8 ranks.
    assert m["optimizer_state_bytes"].max() < \
        recorded["optimizer_state_bytes"].max()


def test_no_memory_timeline_without_the_model(demo):
    result = ettools.simulate(demo, ranks=4, no_memory=True)
    assert len(result.memory_timeline) == 0
    assert "peak_allocated_bytes" not in result.ranks.columns
