"""Filtering the hidden regime from public information: what any PM may know and see.

What a PM may know: the task's regime process in distribution (`TaskSpec.regime_process`,
served at `GET /tasks`: where the path starts, how long each regime lasts and where it goes
next) and a profile of each regime — how a month's returns are distributed in it. The profiles
come either from the market model the code publishes (`model_profiles`: the factor model's
expected sector returns and covariance, widened by the spread of the unknown per-asset tilts)
or from data alone (`fit_profiles`: expectation-maximisation over the returns of public train
episodes, the regime process fixed and each regime's mean and covariance free). What a PM sees
is the month's asset returns — never the regime.

`RegimeChain` is the regime process as a Markov chain over (regime, months it has lasted), so
spell lengths are known in distribution (a hidden semi-Markov model): a boom that always lasts
seven months does not end in the filter's mind after a bad third month. `RegimeBelief` is its
forward filter: each month it weighs every regime by the likelihood of the returns just seen,
then rolls the belief forward one month. `fit_profiles` runs the forward-backward pass of the
same chain inside Baum-Welch.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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
EM_ITERATIONS = 40
EM_TOLERANCE = 1e-6          # relative change of the log-likelihood that ends the fit
COVARIANCE_RIDGE_PCT2 = 0.05  # added to a fitted covariance's diagonal (monthly %^2)


@dataclass(frozen=True)
class RegimeProfiles:
    """How a month's asset returns are distributed in each regime (monthly %, `TICKERS` order):
    `means` (K x N), `covs` (K x N x N) for the likelihood, and `risk_covs` for sizing a book
    (the model's factor covariance without the tilt spread; the same as `covs` when fitted)."""

    names: tuple[str, ...]
    means: np.ndarray
    covs: np.ndarray
    risk_covs: np.ndarray

    @functools.cached_property
    def _inverse_and_logdet(self) -> tuple[np.ndarray, np.ndarray]:
        sign, logdet = np.linalg.slogdet(self.covs)
        assert (sign > 0).all()
        return np.linalg.inv(self.covs), logdet

    def log_likelihood(self, returns_pct: np.ndarray) -> np.ndarray:
        """Log density (up to a constant) of months of returns under each regime: (..., N) in,
        (..., K) out."""
        inv, logdet = self._inverse_and_logdet
        d = returns_pct[..., None, :] - self.means
        return -0.5 * (np.einsum("...ki,kij,...kj->...k", d, inv, d) + logdet)

    def index(self, name: str) -> int:
        return self.names.index(name)


@functools.cache
def model_profiles() -> RegimeProfiles:
    """The profiles the market model publishes (`world/market.py`), for every regime."""
    means = np.array([[REGIMES[k].sector_mu_pct[SECTOR_OF[t]] for t in TICKERS] for k in NAMES])
    risk = np.array([covariance_pct2(k) for k in NAMES])
    tilts = np.diag([ALPHA_SD_PCT[ASSETS[t].asset_class] ** 2 for t in TICKERS])
    return RegimeProfiles(NAMES, means, risk + tilts, risk)


class RegimeChain:
    """A regime process as a Markov chain over (regime, age) for a horizon of months; the
    regimes are indexed as in `names` (the profiles')."""

    def __init__(self, process: RegimeProcess, horizon: int, names: Sequence[str]) -> None:
        start = (process.start, 1)
        states, frontier, edges = [start], [start], {}
        while frontier:
            nxt = []
            for k, age in frontier:
                spell = process.spells[k]
                h = spell.hazard(age)
                out = {}
                if h < 1:
                    out[(k, min(age + 1, horizon))] = 1 - h
                for j, q in spell.after.items():
                    if h > 0:
                        out[(j, 1)] = out.get((j, 1), 0.0) + h * q
                edges[(k, age)] = out
                for s in out:
                    if s not in edges and s not in nxt:
                        nxt.append(s)
            states += [s for s in nxt if s not in states]
            frontier = nxt
        self.states = states
        pos = {s: i for i, s in enumerate(states)}
        self.transition = np.zeros((len(states), len(states)))
        for s, out in edges.items():
            for t, p in out.items():
                self.transition[pos[s], pos[t]] += p
        self.initial = np.zeros(len(states))
        self.initial[0] = 1.0
        self.regime_of = np.array([list(names).index(k) for k, _ in states])
        self.n_regimes = len(names)

    def emissions(self, log_lik: np.ndarray) -> np.ndarray:
        """Per-state likelihoods (T x S), scaled per month, from per-regime log-likelihoods."""
        scaled = np.exp(log_lik - log_lik.max(axis=-1, keepdims=True))
        return scaled[..., self.regime_of]

    def by_regime(self, state_probs: np.ndarray) -> np.ndarray:
        out = np.zeros(state_probs.shape[:-1] + (self.n_regimes,))
        np.add.at(out.T, self.regime_of, state_probs.T)
        return out

    def posteriors(self, log_lik: np.ndarray) -> tuple[np.ndarray, float]:
        """Forward-backward over one episode's months: the regime posteriors (T x K) and the
        log-likelihood of the episode (up to the emissions' constants)."""
        b = self.emissions(log_lik)
        months = len(b)
        alpha = np.zeros((months, len(self.states)))
        scale = np.zeros(months)
        prior = self.initial
        for t in range(months):
            a = prior * b[t]
            scale[t] = a.sum()
            alpha[t] = a / scale[t]
            prior = alpha[t] @ self.transition
        beta = np.ones(len(self.states))
        gamma = np.zeros_like(alpha)
        for t in range(months - 1, -1, -1):
            g = alpha[t] * beta
            gamma[t] = g / g.sum()
            beta = self.transition @ (b[t] * beta)
            beta /= beta.sum()
        log_l = float(np.log(scale).sum() + log_lik.max(axis=-1).sum())
        return self.by_regime(gamma), log_l


class RegimeBelief:
    """The filtered probability of each regime for the coming month."""

    def __init__(self, process: RegimeProcess, horizon: int,
                 profiles: RegimeProfiles | None = None) -> None:
        self.profiles = profiles or model_profiles()
        self.chain = _chain(process, horizon, self.profiles.names)
        self.state = self.chain.initial.copy()

    def update(self, returns_pct: Mapping[str, float]) -> None:
        """Condition on the month just seen, then roll forward to the coming month."""
        r = np.array([returns_pct[t] for t in TICKERS])
        post = self.state * self.chain.emissions(self.profiles.log_likelihood(r))
        total = post.sum()
        if total > 0:   # returns no regime explains keep the prior
            self.state = post / total
        self.state = self.state @ self.chain.transition
        self.state[self.state < 1e-12] = 0.0

    def _weights(self) -> np.ndarray:
        return self.chain.by_regime(self.state)

    def probabilities(self) -> dict[str, float]:
        out = dict.fromkeys(NAMES, 0.0)
        for k, p in zip(self.profiles.names, self._weights(), strict=True):
            out[k] = float(p)
        return out

    def insight(self) -> dict[str, dict[str, float]]:
        """The belief as a policy shows it (`Policy.insight`): `regime_belief`, regime ->
        probability for the coming month, to 4 decimals."""
        return {"regime_belief": {k: round(p, 4) for k, p in self.probabilities().items()}}

    def expected_excess_pct(self) -> dict[str, float]:
        """The belief's expected return of each asset over cash for the coming month (monthly
        %; for the model's profiles sector level: the per-asset tilts are the research's
        business)."""
        mean = self._weights() @ self.profiles.means
        return {t: float(m) - CASH_RATE_PCT for t, m in zip(TICKERS, mean, strict=True)}

    def covariance_pct2(self) -> list[list[float]]:
        """The covariance of the coming month's returns under the belief (monthly %^2): the
        regimes' covariances mixed, plus the spread of their means."""
        w = self._weights()
        m = self.profiles.means
        mean = w @ m
        second = np.einsum("k,kij->ij", w, self.profiles.risk_covs) + np.einsum(
            "k,ki,kj->ij", w, m, m)
        return (second - np.outer(mean, mean)).tolist()

    def second_moment_pct2(self) -> list[list[float]]:
        """The expected square of the coming month's returns (monthly %^2, mean included): what
        a zero-mean risk model such as the Risk Officer's estimates."""
        mean = self._weights() @ self.profiles.means
        return (np.array(self.covariance_pct2()) + np.outer(mean, mean)).tolist()


_CHAINS: dict[tuple[int, int, tuple[str, ...]], tuple[RegimeProcess, RegimeChain]] = {}


def _chain(process: RegimeProcess, horizon: int, names: tuple[str, ...]) -> RegimeChain:
    """The chain of a process, built once (a process holds mappings, so it is not hashable;
    the entry keeps the process alive so its id stays its own)."""
    key = (id(process), horizon, names)
    if key not in _CHAINS:
        _CHAINS[key] = (process, RegimeChain(process, horizon, names))
    return _CHAINS[key][1]


def fit_profiles(episodes: Iterable[tuple[RegimeProcess, np.ndarray]],
                 iterations: int = EM_ITERATIONS) -> RegimeProfiles:
    """Each regime's mean and covariance of a month's returns, fitted by Baum-Welch on episodes
    of public returns (`(process, T x N returns)` pairs) with each process fixed. A regime's
    profile is shared by every process it appears in (the market is the same in every task).
    The first E-step uses the processes alone (no emissions), so the regimes start apart by
    where the processes put them in time."""
    episodes = list(episodes)
    names = tuple(k for k in NAMES if any(k in p.spells for p, _ in episodes))
    chains = [_chain(p, len(x), names) for p, x in episodes]
    n = len(TICKERS)
    profiles = None
    previous = -np.inf
    for _ in range(iterations):
        weight = np.zeros(len(names))
        first = np.zeros((len(names), n))
        second = np.zeros((len(names), n, n))
        total = 0.0
        for chain, (_, x) in zip(chains, episodes, strict=True):
            log_lik = (np.zeros((len(x), len(names))) if profiles is None
                       else profiles.log_likelihood(x))
            gamma, log_l = chain.posteriors(log_lik)
            total += log_l
            weight += gamma.sum(axis=0)
            first += gamma.T @ x
            second += np.einsum("tk,ti,tj->kij", gamma, x, x)
        means = first / weight[:, None]
        covs = second / weight[:, None, None] - np.einsum("ki,kj->kij", means, means)
        covs += COVARIANCE_RIDGE_PCT2 * np.eye(n)
        profiles = RegimeProfiles(names, means, covs, covs)
        if abs(total - previous) <= EM_TOLERANCE * abs(total):
            break
        previous = total
    return profiles
