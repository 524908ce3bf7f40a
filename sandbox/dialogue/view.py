"""A solve run's page in `sandbox view` and `sandbox report`: the solved policy table (the probability of each
instruction at each information state), the PSRO iterations, the game tree's and the policy's figures (the
viewer adds every figure of the run), the dialogues and the instruction-following check."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.page import Chart, Section, Table


def view(path: Path) -> list[Section]:
    return [
        Table("policy.csv", title="Policy table (probability of each instruction per information state)",
              columns=("infostate", "player", "setup", "depth", "own_instructions", "last_message", "instruction",
                       "probability")),
        Chart("psro.csv", x="iteration", y=("nash_conv", "exploitability"), title="PSRO by iteration"),
        Table("psro.csv", title="PSRO iterations"),
        Table("dialogues.csv", title="Dialogues"),
        Table("steering.csv", title="Instruction following"),
        Table("play.csv", title="Play under the solved policy"),
        Table("play_summary.csv", title="Play summary"),
        Table("reward_model_error.csv", title="Reward-model error"),
        Table("agreement.csv", title="Agreement"),
    ]  # fmt: skip
