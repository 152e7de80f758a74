"""Document generators and simulations: the scripts that write docs/*.md and the studies behind them.

Run each from the repository root as a module, e.g. ``python -m experiments.replay_report``; they share
the data helpers of ``benchmarks/`` (``benchmarks._data``, ``benchmarks.early_common``). Speed
measurements live in ``benchmarks/``.
"""
