"""The supervised (SL) baseline: a classifier trained on the same k examples the judge saw.

Kwon et al. trained a small network on the examples' dollar amounts and
picked its epoch on the test set; here the model is an L2-regularised
logistic regression on the same features (P1's and P2's amounts,
standardised with the examples' own statistics), its regularisation chosen
by leave-one-out over the examples only. The test set is never seen before
prediction. With a single class among the examples it predicts that class
(as the paper's 1-example baseline did).

>>> model = fit_supervised([[9.0, 1.0], [8.0, 2.0], [3.0, 7.0], [2.0, 8.0]], [True, True, False, False])
>>> model.predict([[9.5, 0.5], [1.0, 9.0]])
[True, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["SupervisedBaseline", "fit_supervised"]

# Inverse regularisation strengths tried by leave-one-out (the largest is almost unregularised).
STRENGTHS = (0.01, 0.1, 1.0, 10.0, 100.0)


@dataclass(frozen=True)
class SupervisedBaseline:
    """A fitted logistic regression (or a constant, from one-class examples)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray | None
    bias: float
    strength: float | None

    def probability(self, features: Sequence[Sequence[float]]) -> list[float]:
        """P(label True) per row."""
        if self.weights is None:
            return [1.0 / (1.0 + np.exp(-self.bias))] * len(features)
        x = (np.asarray(features, dtype=float) - self.mean) / self.scale
        return [float(p) for p in 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))]

    def predict(self, features: Sequence[Sequence[float]]) -> list[bool]:
        return [p >= 0.5 for p in self.probability(features)]


def _fit(x: np.ndarray, y: np.ndarray, strength: float) -> tuple[np.ndarray, float]:
    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = x @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        nll = float(np.sum(np.logaddexp(0.0, z) - y * z)) + 0.5 * float(w @ w) / strength
        grad = np.append(x.T @ (p - y) + w / strength, np.sum(p - y))
        return nll, grad

    result = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B")
    return result.x[:-1], float(result.x[-1])


def fit_supervised(features: Sequence[Sequence[float]], labels: Sequence[bool]) -> SupervisedBaseline:
    """Fit on the examples; the strength with the best leave-one-out accuracy wins (ties: the stronger prior)."""
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    if len(set(labels)) < 2:
        bias = 20.0 if labels and labels[0] else -20.0
        return SupervisedBaseline(np.zeros(x.shape[1]), np.ones(x.shape[1]), None, bias, None)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    z = (x - mean) / scale
    best: tuple[float, float] | None = None
    for strength in STRENGTHS:
        correct = 0
        for held_out in range(len(y)):
            keep = np.arange(len(y)) != held_out
            if len(set(y[keep])) < 2:  # one class left: the constant it implies
                correct += int(y[keep][0] == y[held_out])
                continue
            w, b = _fit(z[keep], y[keep], strength)
            correct += int((z[held_out] @ w + b >= 0) == bool(y[held_out]))
        if best is None or correct > best[0]:
            best = (correct, strength)
    assert best is not None
    w, b = _fit(z, y, best[1])
    return SupervisedBaseline(mean, scale, w, b, best[1])
