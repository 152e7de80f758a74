"""Side-by-side speed and memory measurements of stopwise (one script each; none is a test).

Run each from the repository root as a module, e.g. ``python -m benchmarks.replay_speed``: the root is
then on the path, so a script imports its neighbours as ``benchmarks.<name>`` and the shared harnesses
as ``tests.support.<name>``. Document generators and simulations live in ``experiments/``.
"""
