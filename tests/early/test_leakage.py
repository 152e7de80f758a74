"""Leakage guard: a prefix's features know nothing of later steps, of ``meta``, of the outcome or of held-out runs."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.early import EarlyOutcomeModel, PrefixFeaturizer, leave_one_out
from stopwise.early._featurizer import Corpus
from stopwise.records import Trajectory


@pytest.fixture(scope="module")
def featurizer(runs: list[Trajectory]) -> PrefixFeaturizer:
    return PrefixFeaturizer(n_components=4, min_df=2, random_state=0).fit(runs)


def test_step_k_features_are_identical_without_the_later_steps(featurizer: PrefixFeaturizer, runs: list[Trajectory]) -> None:
    for run in runs[:12]:
        full = featurizer.transform([run])[0]
        T = len(run.steps)
        for k in sorted({0, 1, T // 2, T - 1, T}):
            cut = run.model_copy(update={"steps": run.steps[:k]})
            prefix = featurizer.transform([cut])[0]
            assert prefix.shape == (k + 1, featurizer.n_features_)
            np.testing.assert_array_equal(prefix, full[: k + 1])


def test_streaming_features_equal_the_batch_features(featurizer: PrefixFeaturizer, runs: list[Trajectory]) -> None:
    for run in runs[:12]:
        batch = featurizer.transform([run])[0]
        stream = featurizer.stream(run.task_text)
        rows = [stream.initial()] + [stream.update(step) for step in run.steps]
        np.testing.assert_array_equal(np.vstack(rows), batch)


def test_meta_outcome_and_cost_never_reach_a_feature(featurizer: PrefixFeaturizer, runs: list[Trajectory]) -> None:
    run = runs[0]
    changed = run.model_copy(
        update={
            "outcome": 1 - (run.outcome or 0),
            "cost_usd": 123.0,
            "attempt": 9,
            "meta": {"error_message": "ContextWindowExceededError", "total_tokens_in": 10**6, "turn_count": 999},
        }
    )
    np.testing.assert_array_equal(featurizer.transform([run])[0], featurizer.transform([changed])[0])


def test_text_blocks_are_fitted_on_the_training_fold_only(runs: list[Trajectory]) -> None:
    """Fitting on a fold of a corpus that also holds the held-out runs equals fitting on the training runs alone."""
    train = [i for i, r in enumerate(runs) if r.agent != "agent-0"]
    seeds = np.arange(5)
    pooled = PrefixFeaturizer(n_components=4, min_df=2)._fit_corpus(Corpus(runs, min_df=2), np.array(train), seeds)
    alone = PrefixFeaturizer(n_components=4, min_df=2)._fit_corpus(Corpus([runs[i] for i in train], min_df=2), np.arange(len(train)), seeds)
    for name, block in pooled.blocks_.items():
        other = alone.blocks_[name]
        assert block.vocabulary.tolist() == other.vocabulary.tolist(), name
        np.testing.assert_array_equal(block.idf, other.idf)
        np.testing.assert_allclose(block.projection, other.projection, rtol=0, atol=1e-12)
    # and the held-out texts do change a fit that includes them: the check above can fail
    everything = PrefixFeaturizer(n_components=4, min_df=2)._fit_corpus(Corpus(runs, min_df=2), np.arange(len(runs)), seeds)
    assert any(
        everything.blocks_[n].vocabulary.shape != pooled.blocks_[n].vocabulary.shape
        or not np.allclose(everything.blocks_[n].idf, pooled.blocks_[n].idf)
        for n in pooled.blocks_
    )


def test_a_fold_of_leave_one_out_is_a_model_fitted_on_the_other_agents(runs: list[Trajectory], small_params: dict) -> None:
    model = EarlyOutcomeModel(**small_params)
    evaluation = leave_one_out(runs, model, by="agent")
    held = "agent-2"
    fitted = EarlyOutcomeModel(**small_params).fit([r for r in runs if r.agent != held])
    test = [r for r in runs if r.agent == held]
    expected = np.vstack(fitted.predict_proba(test))
    ids = evaluation.runs.loc[evaluation.runs["agent"] == held, "run"].to_numpy()
    got = evaluation.predictions.set_index("run").loc[ids, ["p_success", "p_failure"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
