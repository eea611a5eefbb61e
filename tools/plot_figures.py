#!/usr/bin/env python3
"""Draws the figures of `kvsearch report` from the figures.json it writes.

    plot_figures.py FIGURES_JSON OUT_DIR

One PNG per figure, <OUT_DIR>/<name>.png:
  profiles    lambda1 and lambda2 per layer of each method's best state (paper Fig. 1a)
  trajectory  dev score of every evaluation, the dev best-so-far, and the test score of each
              accepted state's replay (Fig. 1b)
  budgets     official test score per budget, one line per method (Fig. 1c)

Exit status 3 when matplotlib cannot be imported (the report then skips the figures).
"""
import json
import os
import sys

MATPLOTLIB_MISSING = 3


STYLES = ["-", "--", "-.", ":"]
MARKERS = ["o", "s", "^", "D", "v"]


def plot_profiles(plt, fig_data, path):
    from matplotlib.ticker import MaxNLocator
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharex=True)
    for k, s in enumerate(fig_data["series"]):
        layers = range(len(s["lambda1"]))
        style = dict(marker=MARKERS[k % len(MARKERS)], linestyle=STYLES[k % len(STYLES)], markersize=4,
                     drawstyle="steps-mid",  # one coefficient per layer
                     label=s["method"])
        axes[0].plot(layers, s["lambda1"], **style)
        axes[1].plot(layers, s["lambda2"], **style)
    for ax, name in zip(axes, ["lambda1 (dispersion)", "lambda2 (correlation)"]):
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("layer")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(fig_data["title"])
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def finish(fig, ax, title, path, legend_size):
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_trajectory(plt, fig_data, path):
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for s in fig_data["series"]:
        points = s["trajectory"]
        orders = [p["order"] + 1 for p in points]
        line, = ax.step(orders, [p["best_so_far"] for p in points], where="post",
                        label=f"{s['method']}: dev best so far")
        ax.scatter(orders, [p["dev"] for p in points], s=14, color=line.get_color(), alpha=0.5,
                   label=f"{s['method']}: dev score of each evaluation")
        replayed = [p for p in points if p["accepted"] and p["test"] is not None]
        ax.plot([p["order"] + 1 for p in replayed], [p["test"] for p in replayed], marker="s",
                linestyle="--", color=line.get_color(),
                label=f"{s['method']}: test replay of accepted states")
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("evaluation (search order)")
    ax.set_ylabel("score (dev: raw, test: official)")
    finish(fig, ax, fig_data["title"], path, legend_size=7)


def plot_budgets(plt, fig_data, path):
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    budgets = set()
    for k, s in enumerate(fig_data["series"]):
        points = [p for p in s["points"] if p["test"] is not None]
        budgets.update(p["budget"] for p in points)
        ax.plot([p["budget"] for p in points], [p["test"] for p in points], marker=MARKERS[k % len(MARKERS)],
                linestyle=STYLES[k % len(STYLES)], label=s["method"])
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(budgets))
    ax.set_xticklabels([str(b) for b in sorted(budgets)])
    ax.set_xlabel("KV budget per head and layer")
    ax.set_ylabel("test score (official scorer)")
    finish(fig, ax, fig_data["title"], path, legend_size=8)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed", file=sys.stderr)
        sys.exit(MATPLOTLIB_MISSING)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    draw = {"profiles": plot_profiles, "trajectory": plot_trajectory, "budgets": plot_budgets}
    for fig_data in data["figures"]:
        path = os.path.join(sys.argv[2], fig_data["name"] + ".png")
        draw[fig_data["kind"]](plt, fig_data, path)
        plt.close("all")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
