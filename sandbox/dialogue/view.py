"""A solve run's page in `sandbox view` and `sandbox report`: the solved policy table (the probability of each
instruction at each information state), the game tree (every terminal dialogue's path through setups,
instructions and chance, as a sunburst), the PSRO iterations, the policy's figures (the viewer adds every figure
of the run), the dialogues and the instruction-following check."""

from __future__ import annotations

from pathlib import Path

from sandbox.viewer.sections import Chart, Section, Table, Tree


def view(path: Path) -> list[Section]:
    return [
        Tree(
            "dialogues.csv",
            path=("setup", "instructions", "seeds"),
            color="payoff_0",
            title="The game tree: setup, each player's instruction in turn, the chance outcome (colour: player 0's "
            "payoff)",
        ),
        Table(
            "policy.csv",
            title="Policy table (probability of each instruction per information state)",
            columns=(
                "infostate",
                "player",
                "setup",
                "depth",
                "own_instructions",
                "last_message",
                "instruction",
                "probability",
            ),
        ),
        Chart("psro.csv", x="iteration", y=("nash_conv", "exploitability"), title="PSRO by iteration"),
        Table("psro.csv", title="PSRO iterations"),
        Table("dialogues.csv", title="Dialogues"),
        Table("steering.csv", title="Instruction following"),
        Table("play.csv", title="Play under the solved policy"),
        Table("play_summary.csv", title="Play summary"),
        Table("reward_model_error.csv", title="Reward-model error"),
        Table("agreement.csv", title="Agreement"),
    ]
