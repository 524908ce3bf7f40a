"""The base of every scenario model, and the amount range games and evaluations share."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator


class StrictModel(BaseModel):
    """Base of every scenario model: unknown fields are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AmountRange(StrictModel):
    """The inclusive range the amount to split is drawn from."""

    min: int = Field(10, ge=1)
    max: int = Field(100, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _ordered(self) -> AmountRange:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is larger than max ({self.max})")
        return self


class Tracking(StrictModel):
    """The `tracking:` block of any scenario (or `--track URI`): log the run to an MLflow tracking store.

    Needs the `tracking` extra (`pip install 'norm-sandbox[tracking]'`, MLflow's client); checked when the file is
    read, so a missing extra is exit 2 before anything runs. The default store is a local `./mlruns` folder
    (MLflow's file store, which MLflow 3 keeps in maintenance mode: the sandbox opts in to it for you); any other
    MLflow URI works (`sqlite:///mlflow.db` with the full `mlflow` package, `http://host:5000`).
    """

    uri: str = Field("file:./mlruns", min_length=1, description="MLflow tracking URI (a path is a file store).")
    experiment: str | None = Field(None, min_length=1, description="MLflow experiment; default the scenario's name.")

    @model_validator(mode="after")
    def _installed(self) -> Tracking:
        from sandbox.base.extras import install_line, missing

        if missing("tracking"):
            raise ValueError(f"needs MLflow, the tracking extra: {install_line(['tracking'])}")
        return self


class ScenarioModel(StrictModel):
    """Base of every kind's top-level scenario model: the blocks every kind takes (`tracking:`)."""

    tracking: Tracking | None = Field(None, description="Log the run to MLflow (the `tracking` extra); none: not.")

    @model_serializer(mode="wrap")
    def _without_unset_tracking(self, handler: Any) -> Any:
        """A scenario without tracking dumps as before the block existed (no `tracking: null`)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("tracking", 0) is None:
            data.pop("tracking")
        return data
