"""A Bayesian filter of the hidden regime from public information, used by the heuristic PM.

What it knows is what any PM may know: the factor model's regime profiles (`world.REGIMES`)
and the task's regime process in distribution (`TaskSpec.regime_process`: where the path
starts, how long each regime lasts and where it goes next). What it sees is the month's asset
returns — never the regime. Each month it weighs every regime by the likelihood of the returns
just seen (a Gaussian with the regime's expected sector returns and its factor covariance,
widened by the spread of the unknown per-asset tilts), then rolls the belief forward one month
with the spell lengths: a forward filter of a hidden semi-Markov model. `expected_excess_pct()`
is the belief's mixture of the regimes' expected sector returns for the coming month, over
cash.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from memex.committee.world.market import (
    ALPHA_SD_PCT,
    ASSETS,
    CASH_RATE_PCT,
    REGIMES,
    SECTOR_OF,
    TICKERS,
    covariance_pct2,
)
from memex.committee.world.tasks import RegimeProcess

NAMES: tuple[str, ...] = tuple(REGIMES)


@functools.cache
def _profile(regime: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Mean, inverse covariance and log-determinant of a month's returns in `regime`."""
    reg = REGIMES[regime]
    mean = np.array([reg.sector_mu_pct[SECTOR_OF[t]] for t in TICKERS])
    cov = np.array(covariance_pct2(regime)) + np.diag(
        [ALPHA_SD_PCT[ASSETS[t].asset_class] ** 2 for t in TICKERS])
    sign, logdet = np.linalg.slogdet(cov)
    assert sign > 0
    return mean, np.linalg.inv(cov), float(logdet)


def log_likelihood(returns_pct: Mapping[str, float]) -> np.ndarray:
    """Log density of one month's returns under each regime, in `NAMES` order."""
    r = np.array([returns_pct[t] for t in TICKERS])
    out = []
    for k in NAMES:
        mean, inv, logdet = _profile(k)
        d = r - mean
        out.append(-0.5 * (float(d @ inv @ d) + logdet))
    return np.array(out)


class RegimeBelief:
    """The filtered probability of each regime for the coming month.

    The state is (regime, months it has lasted so far), so spell lengths are known in
    distribution (a semi-Markov filter): a boom that always lasts seven months does not end
    in the filter's mind after a bad third month."""

    def __init__(self, process: RegimeProcess, horizon: int) -> None:
        self.process = process
        self.horizon = horizon
        self.state: dict[tuple[str, int], float] = {(process.start, 1): 1.0}

    def update(self, returns_pct: Mapping[str, float]) -> None:
        """Condition on the month just seen, then roll forward to the coming month."""
        ll = dict(zip(NAMES, log_likelihood(returns_pct), strict=True))
        top = max(ll[k] for k, _ in self.state)
        post = {s: p * math.exp(ll[s[0]] - top) for s, p in self.state.items()}
        total = sum(post.values())
        if total <= 0:   # returns no regime explains: keep the prior
            post, total = dict(self.state), 1.0
        nxt: dict[tuple[str, int], float] = {}
        for (k, age), p in post.items():
            spell = self.process.spells[k]
            h = spell.hazard(age)
            if h < 1:
                key = (k, min(age + 1, self.horizon))
                nxt[key] = nxt.get(key, 0.0) + p * (1 - h) / total
            for j, q in spell.after.items():
                if h > 0:
                    nxt[(j, 1)] = nxt.get((j, 1), 0.0) + p * h * q / total
        self.state = {s: p for s, p in nxt.items() if p > 1e-12}

    def probabilities(self) -> dict[str, float]:
        out = dict.fromkeys(NAMES, 0.0)
        for (k, _), p in self.state.items():
            out[k] += p
        return out

    def expected_excess_pct(self) -> dict[str, float]:
        """The belief's expected return of each asset over cash for the coming month (monthly %,
        sector level: the per-asset tilts are the research's business)."""
        prob = self.probabilities()
        return {t: sum(p * REGIMES[k].sector_mu_pct[SECTOR_OF[t]] for k, p in prob.items())
                - CASH_RATE_PCT for t in TICKERS}

    def covariance_pct2(self) -> list[list[float]]:
        """The covariance of the coming month's returns under the belief (monthly %^2): the
        regimes' factor covariances mixed, plus the spread of their means."""
        prob = np.array(list(self.probabilities().values()))
        means = np.array([_profile(k)[0] for k in NAMES])
        second = sum(float(p) * (np.array(covariance_pct2(k)) + np.outer(m, m))
                     for k, p, m in zip(NAMES, prob, means, strict=True) if p > 0)
        mean = prob @ means
        return (second - np.outer(mean, mean)).tolist()

    def second_moment_pct2(self) -> list[list[float]]:
        """The expected square of the coming month's returns (monthly %^2, mean included): what
        a zero-mean risk model such as the Risk Officer's estimates."""
        cov = np.array(self.covariance_pct2())
        prob = np.array(list(self.probabilities().values()))
        mean = prob @ np.array([_profile(k)[0] for k in NAMES])
        return (cov + np.outer(mean, mean)).tolist()
