"""Case-generation CLI: `python -m memex.scenarios --seed 7 --difficulty hard --kind layering`.

Prints the public view readably (or as JSON with `--json`). Ground truth is printed only when
asked for with `--with-truth`, since the point of a case is that it is hidden.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from memex.scenarios.case import Case
from memex.scenarios.cases import FIXED_CASES, build
from memex.scenarios.generator import DEFAULT_BENIGN_SHARE, KINDS
from memex.scenarios.model import DIFFICULTIES, PublicCase
from memex.scenarios.spec import CaseSpec


def _money(x: float | None) -> str:
    return "-" if x is None else f"${x:,.2f}"


def _rows(title: str, rows: Iterable[str]) -> list[str]:
    rows = list(rows)
    return [f"\n{title} ({len(rows)})"] + [f"  {r}" for r in rows] if rows else []


def render(pub: PublicCase, max_transactions: int = 40) -> str:
    names = {e.id: e.name for e in pub.entities}
    owner = {a.id: a.owner_id for a in pub.accounts}
    a = pub.alert
    out = [f"{pub.case_id}  [{pub.difficulty}]  {pub.bank}, as of {pub.as_of}, "
           f"step budget {pub.step_budget}",
           f"\nALERT {a.id}: {a.rule.code} {a.rule.name}",
           f"  {a.rule.description}",
           f"  subject {a.subject_id} {names[a.subject_id]}; accounts {', '.join(a.account_ids)}",
           f"  window {a.window_start} .. {a.window_end}; "
           + "; ".join(f"{k}={v:,.2f}" for k, v in a.figures.items())]
    out += _rows("ENTITIES", (
        f"{e.id} {e.kind:<7} {e.name} ({e.country})"
        + (f" customer since {e.customer_since}, risk {e.risk_rating}" if e.customer else "")
        + (f"; {e.occupation}" if e.occupation else "")
        + (f"; {e.business_type}, inc. {e.incorporation_date}" if e.business_type else "")
        + (f"; PEP: {e.pep.position}" if e.pep else "") for e in pub.entities))
    out += _rows("ACCOUNTS", (f"{x.id} {names[x.owner_id]} @ {x.bank} ({x.country}) {x.kind}"
                              for x in pub.accounts))

    def party(acct: str | None) -> str:
        return "cash" if acct is None else names[owner[acct]]

    txns = pub.transactions[-max_transactions:]
    out += _rows(f"TRANSACTIONS (last {len(txns)} of {len(pub.transactions)})", (
        f"{t.id} {t.timestamp} {t.channel:<6} {_money(t.amount_usd):>16}  "
        f"{party(t.from_account)} -> {party(t.to_account)}  {t.memo}"
        + (f" [{t.branch}]" if t.branch else "") + (" CTR" if t.ctr_filed else "")
        for t in txns))
    out += _rows("OWNERSHIP", (f"{o.id} {names[o.owner_id]} owns {o.percent:g}% of "
                               f"{names[o.company_id]}" + (" (nominee)" if o.nominee else "")
                               for o in pub.ownership))
    out += _rows("WATCHLISTS", (f"{w.id} [{w.list}] {w.name} ({w.country}, dob "
                                f"{w.date_of_birth or '-'}) {w.detail}" for w in pub.watchlist))
    out += _rows("TRADE DOCUMENTS", (
        f"{d.id} {d.kind} {d.shipment_ref} {d.date} {d.commodity} {d.quantity:g} {d.unit}"
        f" @ {_money(d.unit_price_usd)}" for d in pub.trade_documents))
    out += _rows("MARKET PRICES", (f"{m.id} {m.commodity}: {_money(m.low_usd)}-"
                                   f"{_money(m.high_usd)} per {m.unit}" for m in pub.market_prices))
    out += _rows("SOURCE OF FUNDS", (f"{s.id} {names[s.entity_id]}: {s.declared_source}; "
                                     f"{len(s.documents)} document(s)"
                                     for s in pub.source_of_funds))
    out += _rows("DEVICE LOGINS", (f"{d.id} {names[d.entity_id]} {d.device_id} {d.ip_address}"
                                   for d in pub.devices))
    out.append(f"\n(+{len(pub.correspondent_hops)} correspondent hops, visible only through "
               "wire traces)")
    return "\n".join(out)


def render_truth(case: Case) -> str:
    t = case.truth
    lines = [f"\nGROUND TRUTH: {t.kind}/{t.variant} -> {t.decision}, typology {t.typology}",
             f"  subjects {', '.join(t.subject_ids) or '-'}; UBO {t.ubo_id or '-'}",
             f"  sections {', '.join(t.justifying_sections)}"]
    lines += [f"  {f.code}: carriers {', '.join(f.carrier_ids)}; evidence "
              f"{', '.join(f.evidence_ids)}" for f in t.red_flags]
    lines += [f"  decisive view {i}: {', '.join(g)}" for i, g in enumerate(t.decisive_evidence, 1)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="memex-case", description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--difficulty", choices=DIFFICULTIES, default="medium")
    p.add_argument("--kind", default=None,
                   help=f"one of {', '.join(KINDS)}, 'benign', 'suspicious', or a fixed case "
                        f"({', '.join(FIXED_CASES)}); default: sampled")
    p.add_argument("--variant", default=None)
    p.add_argument("--benign-share", type=float, default=DEFAULT_BENIGN_SHARE)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--with-truth", action="store_true", help="also print the hidden answer")
    args = p.parse_args(argv)
    try:
        spec = CaseSpec(case=args.kind) if args.kind in FIXED_CASES else CaseSpec(
            seed=args.seed, difficulty=args.difficulty, kind=args.kind, variant=args.variant,
            benign_share=args.benign_share)
        case = build(spec)
    except ValueError as exc:
        p.error(str(exc))
    if args.json:
        print(case.to_json(indent=2) if args.with_truth else case.public_json(indent=2))
    else:
        print(render(case.public) + (render_truth(case) if args.with_truth else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
