"""The lateness histogram (PNG) of the accuracy runs."""

from __future__ import annotations

from pathlib import Path

from benchkit.accuracy import Accuracy

__all__ = ["write_histogram"]


def write_histogram(runs: list[Accuracy], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    top = max((max(run.lateness_ms, default=0) for run in runs), default=0)
    bins = [n * 25 for n in range(int(top / 25) + 2)]
    for run in runs:
        axes.hist(
            run.lateness_ms,
            bins=bins,
            alpha=0.6,
            label=f"{run.actions} due within {run.window_seconds:.0f} s",
        )
    axes.axvline(1000, color="red", linestyle="--", linewidth=1, label="target p99 (1.0 s)")
    axes.set_xlabel("lateness of the fire (ms)")
    axes.set_ylabel("fires")
    early = sum(run.early for run in runs)
    axes.set_title(f"tickwork local: how late each fire ran ({early} early)")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
