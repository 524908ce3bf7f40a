"""The base of every scenario model, and the amount range games and evaluations share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
