"""The audit draws of a replay's orders: every run's draw under the audit seeds of K orders, hashed once.

Order k of :func:`stopwise.replay.replay_joint` audits the runs a live evaluation with ``[early] audit_seed =
seed + k`` audits: those whose :func:`stopwise.records.audit_draw` is below rho. The draws do not depend on rho
or on the centre, and a study replays the same runs at several of them: :func:`audit_draws` keeps the last
few (K, R) draw matrices (:data:`KEPT_DRAWS`), so each is hashed once per process. One draw is one SHA-256 of
the run's key: the key's prefix (``stopwise-audit`` and the seed) is encoded once per order and each run's
tail once per call, about 1.2 us a draw against 3.3 us for ``audit_draw`` called run by run.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["KEPT_DRAWS", "audit_draws"]

KEPT_DRAWS = 4
"""Draw matrices kept for later replays of the same runs (one per pair and order count; 16 MB for 500 orders of 4,000 runs)."""


def audit_draws(seed: int, n_orders: int, keys: Sequence[tuple[str, str, int]]) -> np.ndarray:
    """(K, R) read-only: ``audit_draw(seed + k, system, task, attempt)`` of run r = (system, task, attempt) of ``keys``.

    Examples
    --------
    >>> from stopwise.records import audit_draw
    >>> from stopwise.replay._joint_audits import audit_draws
    >>> draws = audit_draws(7, 2, [("A", "t1", 1), ("B", "t1", 1)])
    >>> draws.shape, float(draws[1, 0]) == audit_draw(8, "A", "t1", 1)
    ((2, 2), True)
    """
    return _draws(int(seed), int(n_orders), tuple((str(s), str(t), int(a)) for s, t, a in keys))


@functools.lru_cache(maxsize=KEPT_DRAWS)
def _draws(seed: int, n_orders: int, keys: tuple[tuple[str, str, int], ...]) -> np.ndarray:
    tails = [f"{system}\x1f{task}\x1f{attempt}".encode("utf-8", "surrogatepass") for system, task, attempt in keys]
    sha256 = hashlib.sha256
    out = np.empty((n_orders, len(keys)))
    for k in range(n_orders):
        head = f"stopwise-audit\x1f{seed + k}\x1f".encode()
        digests = b"".join([sha256(head + tail).digest() for tail in tails])
        # the first 8 of each digest's 32 bytes, big-endian, over 2^64 (as audit_draw reads them)
        out[k] = np.frombuffer(digests, dtype=">u8")[::4] / 2.0**64
    out.flags.writeable = False
    return out
