"""Logistic regression solvers for the outcome fit: numpy only, deterministic, to a stated tolerance.

``fit_logistic(X, y, lower=...)`` minimises the mean negative log-likelihood of ``y ~ logistic(a + X beta)``
plus ``ridge / 2 * |beta|^2`` subject to ``beta_j >= lower_j`` (``-inf``: unbounded) by a projected Newton
method with an active set (Bertsekas 1982): coordinates at their bound whose gradient pushes further out
are held there, a Newton step is taken in the others, and the step is projected back onto the bounds and
shortened until the objective decreases enough (Armijo). The problem is convex (and strictly so with
``ridge > 0``), so the method converges to the one minimum; it stops when the projected gradient's
largest entry is below ``tol``. The intercept is never penalised and never bounded.

``minimise_box(f, x0, lower, upper)`` is the general tool for the non-convex aggregation models
(multiplicative penalty, smoothed maximum): projected gradient descent with Barzilai-Borwein steps and
backtracking, from a given start, for at most ``max_iter`` steps -- a local minimum, reported as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LogisticFit", "fit_logistic", "log_likelihood", "minimise_box", "sigmoid"]

FloatArray = np.ndarray

DEFAULT_TOL = 1e-9
MAX_NEWTON_STEPS = 200
ARMIJO = 1e-4


def sigmoid(z: FloatArray) -> FloatArray:
    """The logistic function, without overflow for large ``|z|``."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def log_likelihood(z: FloatArray, y: FloatArray) -> float:
    """Mean log-likelihood of outcomes ``y`` under log-odds ``z``."""
    return float(np.mean(y * z - np.logaddexp(0.0, z)))


@dataclass(frozen=True)
class LogisticFit:
    """The minimiser: intercept ``a``, coefficients ``beta``, and how the solver ended."""

    intercept: float
    beta: FloatArray
    iterations: int
    converged: bool
    log_likelihood: float  # mean, without the ridge term

    def log_odds(self, X: FloatArray) -> FloatArray:
        """``a + X beta`` for new rows."""
        z: FloatArray = self.intercept + X @ self.beta
        return z


def _objective(params: FloatArray, A: FloatArray, y: FloatArray, ridge: float) -> float:
    z = A @ params
    return float(np.mean(np.logaddexp(0.0, z) - y * z)) + 0.5 * ridge * float(params[1:] @ params[1:])


def fit_logistic(X: FloatArray, y: FloatArray, *, lower: FloatArray | None = None, ridge: float = 0.0,
                 tol: float = DEFAULT_TOL, start: LogisticFit | None = None) -> LogisticFit:
    """Penalised maximum likelihood of ``y ~ logistic(a + X beta)`` with ``beta >= lower`` (module docstring).

    ``start`` (a previous fit on similar data, e.g. the full sample for a bootstrap resample) only saves
    steps: the minimum is the same from any start.
    """
    n, k = X.shape
    A = np.hstack([np.ones((n, 1)), X])
    bound = np.r_[-np.inf, np.full(k, -np.inf) if lower is None else np.asarray(lower, dtype=float)]
    penalty = np.r_[0.0, np.full(k, ridge)]
    if start is not None:
        params = np.maximum(np.r_[start.intercept, start.beta], bound)
    else:
        prevalence = min(max(float(np.mean(y)), 1e-6), 1 - 1e-6)
        params = np.maximum(np.r_[np.log(prevalence / (1 - prevalence)), np.zeros(k)], bound)
    value = _objective(params, A, y, ridge)
    converged = False
    step = 0
    for step in range(1, MAX_NEWTON_STEPS + 1):  # noqa: B007 - the count is reported
        p = sigmoid(A @ params)
        gradient = A.T @ (p - y) / n + penalty * params
        at_bound = (params <= bound) & (gradient > 0)
        projected = np.where(at_bound, 0.0, gradient)
        if float(np.max(np.abs(projected))) < tol:
            converged = True
            break
        free = ~at_bound
        weight = p * (1 - p)
        hessian = (A[:, free].T * weight) @ A[:, free] / n + np.diag(penalty[free])
        hessian += 1e-12 * np.eye(int(free.sum()))  # a column of zeros leaves the Hessian singular
        direction = np.zeros_like(params)
        direction[free] = -np.linalg.lstsq(hessian, gradient[free], rcond=None)[0]
        t = 1.0
        while True:
            candidate = np.maximum(params + t * direction, bound)
            candidate_value = _objective(candidate, A, y, ridge)
            if candidate_value <= value + ARMIJO * float(gradient @ (candidate - params)) or t < 1e-12:
                break
            t /= 2.0
        if candidate_value > value:  # no descent left at machine precision: the minimum is here
            converged = True
            break
        params, value = candidate, candidate_value
    return LogisticFit(intercept=float(params[0]), beta=params[1:].copy(), iterations=step, converged=converged,
                       log_likelihood=log_likelihood(A @ params, y))


def minimise_box(objective: Callable[[FloatArray], tuple[float, FloatArray]], x0: FloatArray, lower: FloatArray,
                 upper: FloatArray, *, max_iter: int = 500, tol: float = 1e-7) -> tuple[FloatArray, float, bool]:
    """A local minimum of ``objective`` (returning value and gradient) on the box ``[lower, upper]``.

    Returns ``(x, value, converged)``; converged when the projected gradient step is below ``tol``.
    """
    x = np.clip(np.asarray(x0, dtype=float), lower, upper)
    value, gradient = objective(x)
    step = 1.0
    for _ in range(max_iter):
        move = np.clip(x - gradient, lower, upper) - x
        if float(np.max(np.abs(move))) < tol:
            return x, value, True
        t = step
        while True:
            candidate = np.clip(x - t * gradient, lower, upper)
            candidate_value, candidate_gradient = objective(candidate)
            if candidate_value <= value + ARMIJO * float(gradient @ (candidate - x)) or t < 1e-14:
                break
            t /= 2.0
        if candidate_value > value:
            return x, value, True
        s, g = candidate - x, candidate_gradient - gradient
        curvature = float(s @ g)
        step = float(s @ s) / curvature if curvature > 1e-16 else 1.0  # Barzilai-Borwein: a curvature estimate
        x, value, gradient = candidate, candidate_value, candidate_gradient
    return x, value, False
