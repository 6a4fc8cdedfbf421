"""What every stage of a case is given: the run's settings and device, the problem's reference
side, the answer checks against it, and the channel to the candidate's worker."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_kernelbench.judge import answers
from pytest_kernelbench.judge.answers import AnswerChecks
from pytest_kernelbench.judge.channel import WorkerChannel
from pytest_kernelbench.judge.reference import ReferenceSide
from pytest_kernelbench.settings import Settings


@dataclass(frozen=True)
class StageContext:
    settings: Settings
    device: str
    reference: ReferenceSide
    answers: AnswerChecks
    channel: WorkerChannel

    def input_seed(self, trial: int) -> int:
        return answers.input_seed(self.settings, trial)

    def timing_seeds(self) -> list[int]:
        return answers.timing_seeds(self.settings)
