#!/usr/bin/env python3
"""ettools in a notebook: load a trace, simulate it, sweep the data-parallel
degree, and plot (matplotlib where it is installed).

    PYTHONPATH=build/python /usr/bin/python3 examples/ettools_example.py \
        'build/demo/ddp_mlp.%d.et' --ranks 4

(`make demo` writes build/demo/ddp_mlp.%d.et.)
"""
import argparse

import ettools


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="a .et, 'out.%%d.et' with --ranks, or a folder")
    parser.add_argument("--ranks", type=int, default=None)
    parser.add_argument("--plot", default="", help="write the sweep's chart here (PNG)")
    args = parser.parse_args()

    trace = ettools.load(args.trace, ranks=args.ranks)
    nodes = trace.nodes
    print(f"{len(nodes)} nodes on {nodes['rank'].nunique()} rank(s)")
    # The ops that take the most recorded time, per kind.
    print(nodes.groupby("kind", observed=True)["duration_us"].sum()
          .sort_values(ascending=False).head())
    print(trace.steps)

    # The run as recorded (profiler included), compared with its profiled steps.
    result = ettools.simulate(trace, host_time="recorded")
    step = result.step
    print(f"predicted step {step['predicted_us']:.0f} us, "
          f"measured {step['measured_us']} us, error {step['error_pct']} %")
    print(result.breakdown)
    print(result.ops.head(8))
    print(ettools.temporal_breakdown(result.timeline))
    # HTA's analyses, on the recorded trace (and alike on result.timeline).
    print(ettools.kernel_breakdown(nodes).head(8))
    print(ettools.comm_comp_overlap(nodes))
    print(ettools.idle_time_breakdown(trace))
    path = ettools.critical_path(trace)
    print(path.groupby(["rank", "kind"])[["path_us", "wait_us"]].sum())
    # The memory model's curve: its largest value is the reported peak.
    memory = result.memory_timeline
    if len(memory):
        print(memory.groupby("rank")["allocated_bytes"].max())

    # One rank's trace on more GPUs: a prediction without a measured truth.
    first = trace.files[0]
    table = ettools.sweep(first, dp=[1, 8, 64])
    print(table[["value", "world", "step_us", "compute_us", "exposed_comm_us"]])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if args.plot:
        ax = table.plot(x="world", y=["compute_us", "exposed_comm_us", "other_us"],
                        kind="bar", stacked=True)
        ax.set_ylabel("us per step")
        plt.savefig(args.plot)


if __name__ == "__main__":
    main()
