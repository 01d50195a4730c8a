"""[[correlations]] compiled: each correlated quantity's copula row (mcrisk/core/copula.py).

A correlation names two world quantities by name. Each must be a single draw (a SAMPLE) of
a distribution that is not a fixed value, on a random stream of its own; anything else is
refused with a ScenarioError located at the name. A risk this run disables has no quantity:
the pairs naming it are left out (what remains of a positive definite matrix is one). A risk
or performance a status settles keeps its distribution (core.facts.with_facts), its quantity
pinned to the fact: a conditioned member like any other, below.

A status (mcrisk/plan/conditioning.py) may condition one member X of a group, exactly, when
its prior has no atom (no table; no `chance` unless X is pinned) and no other member of its group is conditioned
(the others carry no facts, so X's posterior is what the conditioning draws: the copula leaves
X's marginal as it was). The group's rows are then those of its Pearson matrix ordered with X
first, and X's entry in them is X's normal score ndtri(F(x)) of the value x it draws, F its
prior CDF (the copula given X): taken from X's own uniform mapped into (F(b), 1) when X is
drawn above a fixed bound b, into (F(x), F(x)) when it is pinned to x (core.copula.
copula_score), into (F(x-), F(x)) for a `chance` pinned to x (a risk that can no longer
occur: (0, 1 - p); one that occurred with its impact x); from X's value in the world where it varies with another conditioned quantity
(drawn from a shared delay's posterior; a rest or a bound that subtracts a shared delay),
which then must come before the group's other members in the world.

A status may condition BOTH members of a group of two, exactly (joint_status), where one, V,
is drawn from its posterior given its own facts (plan/posterior.py) or pinned, and the other,
H, has facts on H alone: a range [low, high] of H's copula uniform (above a fixed bound b:
(F(b), 1), F H's prior CDF, a `chance` as its mixture; pinned: a point, or pinned_range).
With Pearson rho = 2 sin(pi r / 6), s = sqrt(1 - rho^2) and normal scores z, H's fact is
z_H in [lo, hi] = [ndtri(low), ndtri(high)], so V's posterior gains the factor
g(V) = Phi((hi - rho z_V) / s) - Phi((lo - rho z_V) / s), z_V = ndtri(F_V(V)) (a point:
the conditional density phi((z_H - rho z_V) / s)), multiplied into it on its grid
(partner_likelihood; the table's numerical error is posterior.py's); and H given V is the
copula draw truncated: z_H = rho z_V + s n, n standard normal truncated to
[(lo - rho z_V) / s, (hi - rho z_V) / s], from H's own uniform (the last entry of H's row with
its range, core.copula.truncated_score), H its (mixture) quantile; a pinned H stays pinned.
Anything else is refused, located at the correlation's name: two conditioned members of a
group of three or more, two that are both drawn from posteriors or both above bounds, one
whose value varies with another conditioned quantity (its joint posterior with its partner is
not a product of what the conditioning draws), an atom, a member ranked by its value placed
after another.

Returns the plan's copula fields: for quantity q, the entries q_copula_ptr[q] ..
q_copula_ptr[q + 1] of copula_address, copula_weight, copula_low, copula_high, copula_quantity
and copula_dist (none: drawn as without correlations). A scenario without correlations has every
row empty; without a status conditioning a member, every range is (0, 1) and the draws are
those of before.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from ..core.copula import group_rows, groups
from ..core.definitions import Q_ABOVE, Q_SAMPLE
from ..core.distributions import KIND_FIXED, KIND_LOGNORMAL, KIND_TABLE, cdf, is_bounded
from ..core.errors import Problem, ScenarioError
from ..core.model import Scenario
from ..scenario.reader import did_you_mean
from .conditioning import encoded
from .posterior import Encoded, NoPosterior, posterior
from .world import World

HINT = "run without this correlation (a copy of the scenario), or without the status"


def check_correlations(scenario: Scenario, world: World) -> None:
    """Raise ScenarioError unless every name of [[correlations]] is a quantity that can be
    correlated (before a status conditions the world); records each one's distribution
    (World.prior_dist), which a status may replace."""
    problems = [_problem(scenario, world, f"correlations[{i}].between[{j}]", name)
                for i, pair in _pairs_in_effect(scenario) for j, name in enumerate(pair)]
    problems = [p for p in problems if p is not None]
    if problems:
        raise ScenarioError(problems)
    for _, pair in _pairs_in_effect(scenario):
        for name in pair:
            q = world.index[name]
            world.prior_dist[q] = world.rows[q]["dist"]


def copula_fields(scenario: Scenario, world: World) -> dict[str, np.ndarray]:
    """The copula fields of the plan (q_copula_ptr, copula_address, copula_weight,
    copula_low, copula_high, copula_quantity, copula_dist); a ScenarioError where a status
    conditions a group in a way the copula cannot follow exactly (the module's docstring)."""
    pairs, keys = [], {}
    for i, pair in _pairs_in_effect(scenario):
        pairs.append((*pair, scenario.correlations[i].rank))
        for j, name in enumerate(pair):
            keys.setdefault(name, f"correlations[{i}].between[{j}]")
    problems, rows, scores = [], {}, {}
    for members in groups(pairs):
        conditioned = [m for m in members if _conditioned(world, world.index[m])
                       and world.index[m] not in world.copula_given]
        if len(conditioned) > 1:
            why = (_why_not_joint(world, *conditioned) if len(members) == 2
                   else "a status may condition one quantity of a group of three or more")
            problems += [Problem(
                scenario.path, keys[m], m, f"is conditioned by the status, as is "
                f"{', '.join(repr(o) for o in conditioned if o != m)} of its correlation group: "
                f"{why}", HINT) for m in conditioned]
            continue
        if conditioned:
            x = conditioned[0]
            try:
                scores[x] = score_of(world, world.index[x])
                _check_order(world, x, members, scores[x])
            except ValueError as why:
                problems.append(Problem(scenario.path, keys[x], x, str(why), HINT))
                continue
            members = [x] + [m for m in members if m != x]
        rows.update(group_rows(members, pairs))
        if conditioned:
            del rows[members[0]]       # X is drawn as the status conditions it
        for m in members:              # a partner joint_status leaves as conditioned: pinned
            if m in rows and world.index[m] in world.copula_given \
                    and world.rows[world.index[m]]["kind"] != Q_SAMPLE:
                del rows[m]
    if problems:
        raise ScenarioError(problems)
    ptr, address, weight, low, high, quantity, dist = [0], [], [], [], [], [], []
    for name in world.names:
        for member, w in rows.get(name, ()):
            address.append(world.rows[world.index[member]]["address"][0])
            weight.append(w)
            score = scores.get(member, AS_DRAWN)
            if member == name and world.index[name] in world.copula_given:
                score = (*world.copula_given[world.index[name]], -1, 0)   # H: truncated
            low.append(score[0])
            high.append(score[1])
            quantity.append(score[2])
            dist.append(score[3])
        ptr.append(len(address))
    return {"q_copula_ptr": np.array(ptr, dtype=np.int32),
            "copula_address": np.array(address or [0], dtype=np.uint64),
            "copula_weight": np.array(weight or [0.0], dtype=np.float64),
            "copula_low": np.array(low or [0.0], dtype=np.float64),
            "copula_high": np.array(high or [1.0], dtype=np.float64),
            "copula_quantity": np.array(quantity or [-1], dtype=np.int32),
            "copula_dist": np.array(dist or [0], dtype=np.int32)}


AS_DRAWN = (0.0, 1.0, -1, 0)    # an entry's score from its address's uniform as it is


def joint_status(scenario: Scenario, world: World) -> None:
    """Condition each group of two members that a status conditions both of exactly (the
    module's docstring), once the status has conditioned the world: V (drawn from its
    posterior, or pinned) and H (its facts on H alone: above a fixed bound, or pinned), whose
    fact is a range [low, high] of H's copula uniform. V's posterior gains the factor
    g(V) = P(z_H in [lo, hi] | z_V) (partner_likelihood); H, where it is drawn, becomes a
    correlated SAMPLE again whose own entry copula_fields gives the range (world.copula_given:
    the kernels draw it truncated given V's entry). Groups that do not fit are left for
    copula_fields to refuse; a ScenarioError where V's posterior has no mass left."""
    pairs = [(*pair, scenario.correlations[i].rank) for i, pair in _pairs_in_effect(scenario)]
    problems = []
    for members in groups(pairs):
        both = [world.index[m] for m in members if _conditioned(world, world.index[m])]
        if len(members) != 2 or len(both) != 2 or isinstance(_joint(world, *both), str):
            continue
        v, h = _joint(world, *both)
        row = group_rows([world.names[v], world.names[h]], pairs)[world.names[h]]
        rho, s = (row[0][1], row[1][1]) if len(row) == 2 else (0.0, 1.0)
        world.copula_given[h] = given_range(world, h)
        if rho == 0.0:                 # independent: each is drawn as the status conditions it
            continue
        if world.rows[h]["kind"] == Q_ABOVE:
            world.rows[h].update(kind=Q_SAMPLE, dist=world.prior_dist[h], const=0.0)
        if world.rows[v]["kind"] != Q_SAMPLE:
            continue                   # V pinned: nothing to weigh
        prior = encoded(world, world.prior_dist[v])
        facts = world.likelihoods[v]
        partner = partner_likelihood(prior, *world.copula_given[h], rho, s)
        try:
            table = posterior(prior, lambda x, f=facts, g=partner: f(x) + g(x))
        except NoPosterior:
            key = next(f"correlations[{i}]" for i, pair in _pairs_in_effect(scenario)
                       if world.names[v] in pair and world.names[h] in pair)
            problems.append(Problem(scenario.path, key, f"{world.names[v]}, {world.names[h]}",
                                    "the status's facts on the two leave no value the "
                                    "copula allows", HINT))
            continue
        world.rows[v]["dist"] = world.table_dist(table.table, table.chance)
    if problems:
        raise ScenarioError(problems)


def _joint(world: World, a: int, b: int) -> tuple[int, int] | str:
    """(V, H) of two conditioned members that joint_status conditions exactly, or why not:
    V drawn from its posterior (its facts' likelihood known) or pinned, H above a fixed bound
    or pinned, neither varying with another quantity."""
    def kind(q: int) -> str:
        row = world.rows[q]
        if row["terms"]:
            return "varies"
        if row["kind"] == Q_SAMPLE:
            return "posterior" if q in world.likelihoods else "varies"
        return "above" if row["kind"] == Q_ABOVE else "pinned"

    kinds = (kind(a), kind(b))
    if "varies" in kinds:
        q = (a, b)[kinds.index("varies")]
        return (f"{world.names[q]!r} varies with another conditioned quantity (a shared delay): "
                "a status may condition both quantities of a group of two only where one's "
                "facts are on it alone")
    if kinds == ("posterior", "posterior"):
        return ("both are drawn from their posteriors: a status may condition both quantities "
                "of a group of two only where one's facts are on it alone")
    if kinds == ("above", "above"):
        return ("both are drawn above a bound: a status may condition both quantities of a "
                "group of two only where one is drawn from its posterior or pinned")
    v, h = (a, b) if kinds[0] == "posterior" or kinds[1] == "above" else (b, a)
    if world.dists[world.prior_dist[h]][0] == KIND_TABLE:
        return f"{world.names[h]!r} is a table distribution: its rank given the status is not defined"
    return v, h


def _why_not_joint(world: World, a: str, b: str) -> str:
    why = _joint(world, world.index[a], world.index[b])
    return why if isinstance(why, str) else "not supported"


def given_range(world: World, h: int) -> tuple[float, float]:
    """The range (low, high) of H's copula uniform that its facts leave: (F(b), 1) above a
    fixed bound b, F H's distribution in the scenario (a `chance` p of G as a mixture:
    1 - p + p G(b) from b = 0 on, 0 below), (F(x), F(x)) pinned to x, and a `chance` pinned
    (pinned_range)."""
    row = world.rows[h]
    kind, param, chance = world.dists[world.prior_dist[h]]
    param = np.array(param, dtype=np.float64)
    tables = np.concatenate(world.pert_tables) if world.pert_tables else np.zeros(1)
    x = row["const"]
    if row["kind"] == Q_ABOVE:
        inner = float(cdf(kind, param, tables, x))
        return ((1.0 - chance) + chance * inner if x >= 0.0 else 0.0) if chance < 1.0 \
            else inner, 1.0
    if chance < 1.0:
        return pinned_range(kind, param, chance, tables, x)
    f = float(cdf(kind, param, tables, x))
    return f, f


def prior_scores(prior: Encoded, x: np.ndarray) -> np.ndarray:
    """V's normal scores ndtri(F(x)) under its prior F (a lognormal's (log x - mu) / sigma
    exactly, as posterior.values_at inverts)."""
    x = np.asarray(x, dtype=np.float64)
    if prior.kind == KIND_LOGNORMAL and not is_bounded(prior.kind, prior.param):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.log(x) - prior.param[0]) / prior.param[1]
    return special.ndtri(cdf(prior.kind, prior.param, prior.tables, x))


def partner_likelihood(prior: Encoded, low: float, high: float, rho: float, s: float):
    """log g(V): H's fact given V's value, H's normal score z_H = rho z_V + s n (n standard
    normal) constrained to [ndtri(low), ndtri(high)]: log(Phi(b) - Phi(a)),
    a = (lo - rho z_V) / s, b = (hi - rho z_V) / s (the smaller tail's difference, for
    precision); for a point (low == high) the conditional density's log,
    -((z_H - rho z_V) / s)^2 / 2, up to a constant."""
    lo = -np.inf if low <= 0.0 else float(special.ndtri(low))
    hi = np.inf if high >= 1.0 else float(special.ndtri(high))

    def log_g(x: np.ndarray) -> np.ndarray:
        z = prior_scores(prior, x)
        if low == high:
            return -0.5 * ((lo - rho * z) / s) ** 2
        a, b = (lo - rho * z) / s, (hi - rho * z) / s
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(a > 0.0, special.ndtr(-a) - special.ndtr(-b),
                         special.ndtr(b) - special.ndtr(a))
            return np.log(g)
    return log_g


def _conditioned(world: World, q: int) -> bool:
    """Whether a status rewrote correlated quantity q (pinned it, drew it from a posterior,
    as a rest or above a bound)."""
    row = world.rows[q]
    return not (row["kind"] == Q_SAMPLE and row["dist"] == world.prior_dist[q])


def score_of(world: World, q: int) -> tuple[float, float, int, int]:
    """How X's normal score is taken, (low, high, quantity, dist): from X's own uniform mapped
    into the range of its prior CDF F that its conditioned draw takes it to, (F(x), F(x), -1, 0)
    pinned to x, (F(b), 1, -1, 0) above a fixed bound b; or, where X's conditioned value
    varies with another quantity's (a shared delay's posterior, a rest or a bound that
    subtracts one), from that value itself, ranked by F: (0, 1, X, X's prior distribution).
    A `chance` X pinned by the status (a risk that can no longer occur, or occurred with its
    impact) takes the range of its mixture's CDF where it equals x, (P(X < x), P(X <= x)):
    (0, 1 - p) at 0, a point at an impact x > 0, (1 - p, 1) at a fixed impact (pinned_range).
    A ValueError says why when X has no normal score (an atom it is not pinned to)."""
    row = world.rows[q]
    prior = world.prior_dist[q]
    kind, param, chance = world.dists[prior]
    pinned = not row["terms"] and row["kind"] not in (Q_SAMPLE, Q_ABOVE)
    if (chance < 1.0 and not pinned) or kind == KIND_TABLE:
        what = "may be exactly 0 (a `chance`)" if chance < 1.0 else "is a table distribution"
        raise ValueError(f"is conditioned by the status and {what}: its rank given the status "
                         "is not defined")
    if row["terms"] or row["kind"] == Q_SAMPLE:
        return 0.0, 1.0, q, prior
    tables = np.concatenate(world.pert_tables) if world.pert_tables else np.zeros(1)
    if chance < 1.0:
        return (*pinned_range(kind, np.array(param, dtype=np.float64), chance, tables,
                              row["const"]), -1, 0)
    f = float(cdf(kind, np.array(param, dtype=np.float64), tables, row["const"]))
    return (f, 1.0, -1, 0) if row["kind"] == Q_ABOVE else (f, f, -1, 0)


ATOM = 1e-9     # a jump of an inner CDF larger than this at x is an atom there


def pinned_range(kind: int, param: np.ndarray, chance: float, tables: np.ndarray,
                 x: float) -> tuple[float, float]:
    """(P(X < x), P(X <= x)) of X, `chance` p of an inner distribution G (core.copula's
    mixture: 0 when v <= 1 - p, else G's ppf((v - (1 - p)) / p)): the copula uniforms v that
    draw x. At 0 (a risk that did not occur) (0, 1 - p + p G(0)); at x > 0 (it occurred with
    impact x) (1 - p + p G(x-), 1 - p + p G(x)), G(x-) = G(x) unless G has an atom at x (a
    fixed impact: then (1 - p, 1))."""
    def g(at: float) -> float:
        return float(cdf(kind, param, tables, at))

    high = (1.0 - chance) + chance * g(x)
    if x <= 0.0:
        return 0.0, high
    below = g(float(np.nextafter(x, -np.inf)))
    if g(x) - below <= ATOM:
        return high, high
    return (1.0 - chance) + chance * below, high


def _check_order(world: World, x: str, members: list[str], score: tuple) -> None:
    """A member ranked by its value must come before the others in the world, which is
    evaluated in order: a ValueError naming the first that does not."""
    if score[2] < 0:
        return
    earlier = [m for m in members if world.index[m] < world.index[x]]
    if earlier:
        raise ValueError(f"is conditioned by the status, and its value varies from world to "
                         f"world with another conditioned quantity's, but {earlier[0]!r} of its "
                         "correlation group comes before it in the world: not supported")


def _pairs_in_effect(scenario: Scenario) -> list[tuple[int, tuple[str, str]]]:
    """(entry index, names) of the correlations this run draws: not those naming a risk it
    disables (that risk has no quantity)."""
    disabled = {f"risk.{risk.id}" for risk in scenario.risks if not risk.enabled}
    return [(i, c.between) for i, c in enumerate(scenario.correlations)
            if not disabled.intersection(c.between)]


def _problem(scenario: Scenario, world: World, key: str, name: str) -> Problem | None:
    """Why quantity `name` cannot be correlated, or None."""
    def refuse(message: str, hint: str) -> Problem:
        return Problem(scenario.path, key, name, message, hint)

    if name not in world.index:
        drawable = [n for n, row in zip(world.names, world.rows) if _drawable(world, row)]
        hint = did_you_mean(name, drawable, "quantities that can be correlated")
        if not hint.startswith("did you mean"):    # not every name: a scenario has hundreds
            hint = (f"name a drawn quantity, such as {', '.join(map(repr, drawable[:4]))} "
                    "(docs/scenario-format.md, [[correlations]])")
        return refuse("is no quantity of this scenario", hint)
    row = world.rows[world.index[name]]
    if row["kind"] != Q_SAMPLE:
        parts = [world.names[t] for t in row["terms"] if _drawable(world, world.rows[t])]
        return refuse("is not a single draw (a sum of draws, a burn-in or a quantity "
                      "derived from others)",
                      f"correlate one of the draws it is made of: {', '.join(parts)}"
                      if parts else "correlate a drawn quantity (a delay, a duration, a "
                      "shared delay, a risk, a drawn performance or price)")
    if _fixed(world, row):
        return refuse("is a fixed value: it has no draw to correlate",
                      "give it a distribution, or remove this correlation")
    sharing = [n for n, other in zip(world.names, world.rows)
               if other is not row and row["address"][0] in other["address"]]
    if sharing:
        return refuse(f"shares its random stream with {sharing[0]!r} (one draw for every "
                      "acceptance policy)", "correlate a quantity with a stream of its own")
    return None


def _drawable(world: World, row: dict) -> bool:
    """A SAMPLE of a distribution that is not fixed, not conditioned by a status."""
    return (row["kind"] == Q_SAMPLE and row["status"] == 0 and not _fixed(world, row)
            and world.dists[row["dist"]][0] != KIND_TABLE)


def _fixed(world: World, row: dict) -> bool:
    kind, _, chance = world.dists[row["dist"]]
    return kind == KIND_FIXED and chance >= 1.0
