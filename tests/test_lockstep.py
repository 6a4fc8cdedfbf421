"""A reference that keeps state between calls: candidates judged in lockstep with it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_kernelbench import evaluate
from pytest_kernelbench.judge import lockstep

FAST = {"device": "cpu", "trials": 3, "time_budget_s": 0.05, "p": 0.0}

# Upstream v0's VanillaRNN in small: the hidden state drawn at construction, overwritten at
# every call, so each answer depends on every call before it.
STATEFUL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.hidden = torch.randn((batch_size, hidden_size))
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)

        def forward(self, x):
            self.hidden = self.hidden.to(x.device)
            self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
            return self.hidden

    batch_size = 4

    def get_inputs():
        return [torch.randn(batch_size, 8)]

    def get_init_inputs():
        return [8, 16]
""")

# The same model under the candidate's name: it keeps the same state.
FAITHFUL = STATEFUL.replace("class Model(", "class ModelNew(")
# Starts from the constructor's state at every call: right at the first call only.
FORGETS = FAITHFUL.replace("self.hidden = torch.tanh(", "return torch.tanh(")
# Faithful for its first calls, then hands back its last answer (the correctness trials pass).
CACHES_LATER = FAITHFUL.replace("""    def forward(self, x):
""", """    calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 4:
            return self.hidden.clone()
""")
# A reference whose state starts from entropy: no fresh copy answers like another.
IRREPRODUCIBLE = STATEFUL.replace("self.hidden = torch.randn((batch_size, hidden_size))",
                                  "self.hidden = torch.randn((batch_size, hidden_size), "
                                  "generator=torch.Generator().manual_seed("
                                  "int.from_bytes(__import__('os').urandom(4), 'little')))")


assert len({FAITHFUL, FORGETS, CACHES_LATER, IRREPRODUCIBLE, STATEFUL}) == 5


def problem_and_candidate(tmp_path: Path, problem: str, candidate: str) -> tuple[Path, Path]:
    level = tmp_path / "level3"
    level.mkdir()
    (level / "33_VanillaRNN.py").write_text(problem)
    (tmp_path / "33_VanillaRNN.py").write_text(candidate)
    return level / "33_VanillaRNN.py", tmp_path / "33_VanillaRNN.py"


class Counter:
    """A model whose answer is how often it was called, and a twin factory counting builds."""

    def __init__(self) -> None:
        self.built = 0

    def fresh(self):
        self.built += 1
        calls = []

        def model(x):
            calls.append(x)
            return sum(calls)
        return model


def test_the_twin_follows_a_sequence_and_starts_afresh_where_one_diverges():
    counter = Counter()
    twin = lockstep.Lockstep(counter.fresh, lambda seed: [seed])
    assert twin.output_at([1, 2, 3]) == 6
    assert twin.output_at([1, 2, 3, 4]) == 10 and counter.built == 1  # followed on
    assert twin.output_at([1, 2, 3, 4], position=3) == 6 and counter.built == 1  # kept
    assert twin.output_at([1, 2, 3, 4], position=2) == 3 and counter.built == 2  # replayed
    assert twin.output_at([1, 5]) == 6 and counter.built == 3  # another candidate's calls
    with pytest.raises(ValueError):
        twin.output_at([1], position=2)


def test_a_reference_is_reproducible_only_when_fresh_copies_answer_alike():
    counter = Counter()
    assert lockstep.reproducible(counter.fresh, [2], lambda a, b: a == b)
    drawn = iter(range(100))
    assert not lockstep.reproducible(lambda: (lambda x: x + next(drawn)), [2],
                                     lambda a, b: a == b)


@pytest.mark.parametrize("candidate, status", [
    (FAITHFUL, "passed"),
    (FORGETS, "mismatch"),
    (CACHES_LATER, "cheat"),
], ids=["faithful", "forgets-its-state", "caches-in-the-timed-calls"])
def test_a_candidate_of_a_stateful_reference_is_judged_in_lockstep(tmp_path, candidate, status):
    problem, path = problem_and_candidate(tmp_path, STATEFUL, candidate)
    result = evaluate(problem, path, **FAST)
    assert result["status"] == status, result["error"]
    assert lockstep.FLAG in result["flags"]
    if status == "passed":
        assert result["upstream"]["correct"] is True and result["timing"] == "events"
    if status == "mismatch":
        assert result["error"].startswith("trial 1")  # its first call is right
    if status == "cheat":
        assert "timed call" in result["error"]


def test_a_reference_no_fresh_copy_reproduces_is_a_problem_error(tmp_path):
    problem, path = problem_and_candidate(tmp_path, IRREPRODUCIBLE, FAITHFUL)
    result = evaluate(problem, path, **FAST)
    assert result["status"] == "problem_error"
    assert "keeps state between calls" in result["error"]
