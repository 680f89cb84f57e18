"""The 19 tools, declared once.

Each tool is a method of `Toolkit` with typed parameters and a Google-style docstring. Every
other interface is derived from these declarations by `TOOLS` (below): the environment's
dispatcher and argument validation, the tool catalog of the OpenEnv `/schema`, the prompt's
tool list and the OpenAI function specs. Parameters annotated with `Ref` name case records; the
environment checks them against what the agent has seen and what is resident before the call.

Tools return facts from the case's public view, never conclusions: no typology, no "shell"
or "phantom" flags, no list of valid IDs on a miss.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import unicodedata
from collections import Counter, defaultdict
from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, Field

from memex.envkit.declarations import Ref, ToolSpec, declare, prompt_list
from memex.envkit.errors import CodedError
from memex.graders.decision import Decision, Finding
from memex.models import TOOL_NAMES
from memex.scenarios import vocab
from memex.scenarios.ids import ID_PATTERN
from memex.scenarios.manual import SECTIONS
from memex.scenarios.model import Channel, InformationTopic, Typology
from memex.server.case_index import CaseIndex
from memex.state_manager import MAX_NOTE_CHARS, MAX_NOTES, OSState

EntityId = Annotated[str, Ref("entity")]
AccountId = Annotated[str, Ref("account")]
TransactionId = Annotated[str, Ref("transaction")]
InvoiceId = Annotated[str, Ref("invoice")]

# Fuzzy name matching is quadratic in the name's length; no real name is longer.
MAX_NAME_CHARS = 200


class ToolInputError(CodedError):
    """A well-formed call the case cannot answer (e.g. tracing a cash deposit)."""


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    """`d` without its None values and empty lists and tuples (other falsy values are facts)."""
    return {k: v for k, v in d.items() if v is not None and (v or not isinstance(v, (list, tuple)))}


def _dump(record: BaseModel, **options: Any) -> dict[str, Any]:
    """`record.model_dump(**options)`, asked of the serializer directly: pydantic's wrapper
    handles a dozen keywords on every call, which costs more than dumping a small record."""
    return record.__pydantic_serializer__.to_python(record, **options)


def _norm_name(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", ascii_name.lower()).split())


class _Manual:
    """BM25 (bm25s, Snowball stemming) over the manual's titles and texts."""

    def __init__(self) -> None:
        # bm25s brings scipy, numba and tqdm: imported with the index, on the first search (or
        # when a server starts), so importing the tools or the environment loads none of them.
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.ids = list(SECTIONS)
        self.stemmer = Stemmer.Stemmer("english")
        corpus = [f"{s.title}. {s.title}. {s.text}" for s in SECTIONS.values()]
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=self.stemmer,
                                show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The best `k` sections with a positive score, best first: (section id, score)."""
        tokens = self.bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer,
                                     show_progress=False)
        if not len(tokens.ids[0]):  # no content word (an id of 0 is a real token)
            return []
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        return [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True)
                if s > 0]


@functools.cache
def manual_index() -> _Manual:
    """The manual's search index, built once per process on first use."""
    return _Manual()


MANUAL_HITS = 5
SNIPPET_CHARS = 180
_SNIPPETS = {sid: s.text[:SNIPPET_CHARS] + ("..." if len(s.text) > SNIPPET_CHARS else "")
             for sid, s in SECTIONS.items()}


@functools.lru_cache(maxsize=1024)
def _manual_hits(query: str) -> tuple[tuple[str, str, str, float], ...]:
    """`search_compliance_manual`'s hits for `query` — (section id, title, snippet, score),
    best first — memoised: a pure function of the query, and a BM25 search costs more than a
    whole step."""
    return tuple((sid, SECTIONS[sid].title, _SNIPPETS[sid], round(score, 3))
                 for sid, score in manual_index().search(query, k=MANUAL_HITS))


class Toolkit:
    """The agent's tools over one case. Investigation tools read `index`; OS tools change
    `os`; terminal tools return a `Decision` for the grader."""

    def __init__(self, index: CaseIndex, os: OSState, eta_for):
        self.ix = index
        self.os = os
        self._eta_for = eta_for

    @functools.cached_property
    def _watchlist(self) -> list[tuple[Any, str, frozenset[str], Counter[str]]]:
        """Each watchlist entry with its normalised name, that name's tokens and letters."""
        return [(w, name, frozenset(name.split()), Counter(name))
                for w in self.ix.case.watchlist for name in (_norm_name(w.name),)]

    def _matcher(self, name: str) -> difflib.SequenceMatcher:
        """A matcher against a watchlist name, built on first need (it indexes the name once,
        for every query compared to it; most queries are ruled out before one is needed)."""
        matchers = self.__dict__.setdefault("_matchers", {})
        matcher = matchers.get(name)
        if matcher is None:
            matcher = matchers[name] = difflib.SequenceMatcher(None, "", name)
        return matcher

    # ---- views ----------------------------------------------------------------------------
    def _txn_line(self, t, account_id: str | None = None) -> dict[str, Any]:
        line: dict[str, Any] = {"id": t.id, "timestamp": t.timestamp,
                                "amount_usd": t.amount_usd, "channel": t.channel}
        if t.currency != "USD":
            line["amount"], line["currency"] = t.amount, t.currency
        if account_id is not None:
            line["direction"] = "in" if t.to_account == account_id else "out"
            other = t.from_account if t.to_account == account_id else t.to_account
            line.update(counterparty=self.ix.owner_name(other), counterparty_account=other,
                        counterparty_id=self.ix.owner_id(other))
        else:
            line.update(from_account=t.from_account, from_party=self.ix.owner_name(t.from_account),
                        from_party_id=self.ix.owner_id(t.from_account), to_account=t.to_account,
                        to_party=self.ix.owner_name(t.to_account),
                        to_party_id=self.ix.owner_id(t.to_account))
        # The optional facts, only where there is one (a ledger holds many lines).
        if t.memo:
            line["memo"] = t.memo
        if t.branch is not None:
            line["branch"] = t.branch
        if t.conducted_by is not None:
            line["conducted_by"] = t.conducted_by
        if t.reference is not None:
            line["reference"] = t.reference
        if t.ctr_filed:
            line["ctr_filed"] = True
        return line

    def _entity_brief(self, entity_id: str) -> dict[str, Any]:
        e = self.ix.entities[entity_id]
        return {"entity_id": e.id, "name": e.name, "kind": e.kind, "country": e.country}

    # ---- investigation --------------------------------------------------------------------
    def review_alert(self) -> dict:
        """Show the alert under investigation: the monitoring rule that fired, the subject,
        the accounts, the window, its figures and the transactions that triggered it.

        Returns:
            The alert with its triggering transactions.
        """
        a = self.ix.case.alert
        return {
            "alert_id": a.id, "rule": _dump(a.rule), "raised_on": a.raised_on,
            "subject": self._entity_brief(a.subject_id), "account_ids": list(a.account_ids),
            "window": {"start": a.window_start, "end": a.window_end}, "figures": a.figures,
            "transactions": [self._txn_line(self.ix.transactions[t]) for t in a.transaction_ids],
            "case": {"case_id": self.ix.case.case_id, "bank": self.ix.case.bank,
                     "as_of": self.ix.case.as_of, "step_budget": self.ix.case.step_budget},
        }

    def get_customer_profile(self, entity_id: EntityId) -> dict:
        """Read the bank's file on a person or company: KYC data for customers (occupation,
        declared income or turnover, incorporation, address, directors, risk rating, PEP role,
        expected monthly activity) or registry data for non-customers, and their accounts.

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            The profile and the entity's known accounts.
        """
        e = self.ix.entities[entity_id]
        # The fields on file, without the empty ones, in field order. They are plain values but
        # for the PEP role (a record: dumped) and the directors (briefs, below), so the record's
        # own dump is not needed: its serializer would be one more body of code to run cold on
        # every step (tests/unit/test_step_fast_paths.py holds the two profiles equal).
        profile = {name: value for name, value in vars(e).items() if value is not None}
        del profile["id"]  # named `entity_id`, after the KYC fields
        if e.pep is not None:
            profile["pep"] = _dump(e.pep)
        profile["entity_id"] = e.id
        if e.directors:
            profile["directors"] = [self._entity_brief(d) for d in e.directors]
        else:
            del profile["directors"]
        if e.household:
            profile["household"] = [self._entity_brief(m) for m in e.household]
        else:
            del profile["household"]
        accounts = [{"account_id": a.id, "bank": a.bank, "country": a.country, "kind": a.kind,
                     "opened": a.opened} for a in self.ix.accounts_of[e.id]]
        if accounts:
            profile["accounts"] = accounts
        return profile

    def query_transactions(self, account_id: AccountId, start_date: str | None = None,
                           end_date: str | None = None, channel: Channel | None = None,
                           min_amount_usd: float | None = None, limit: int = 30) -> dict:
        """List ledger lines of an account, newest first, with totals over all matches.
        For accounts at other banks only the lines that touch this bank's accounts exist.

        Args:
            account_id: ID of the account (ACC-...).
            start_date: Earliest date to include, YYYY-MM-DD.
            end_date: Latest date to include, YYYY-MM-DD.
            channel: Only this channel: cash, wire, ach, card or cheque.
            min_amount_usd: Only lines of at least this USD amount.
            limit: Maximum number of lines to return (1-100).

        Returns:
            Matching lines and totals by channel and direction.
        """
        for label, value in (("start_date", start_date), ("end_date", end_date)):
            if value is not None:
                try:
                    date.fromisoformat(value)
                except ValueError:
                    raise ToolInputError("invalid_argument",
                                         f"{label} must be a date YYYY-MM-DD") from None
        if not 1 <= limit <= 100:
            raise ToolInputError("invalid_argument", "limit must be between 1 and 100")
        rows = [t for t in self.ix.txns_of_account[account_id]
                if (start_date is None or t.timestamp[:10] >= start_date)
                and (end_date is None or t.timestamp[:10] <= end_date)
                and (channel is None or t.channel == channel)
                and (min_amount_usd is None or t.amount_usd >= min_amount_usd)]
        amounts: dict[tuple[str, bool], list[float]] = defaultdict(list)
        for t in rows:
            amounts[t.channel, t.to_account != account_id].append(t.amount_usd)
        # Every amount is a whole number of cents (`scenarios.builder`), so the sum rounded once
        # is the total rounded after each line, as an auditor would add them.
        totals = {f"{channel}_{'out' if out else 'in'}": {"count": len(usd),
                                                          "usd": round(math.fsum(usd), 2)}
                  for (channel, out), usd in amounts.items()}
        acct = self.ix.accounts[account_id]
        return {"account_id": account_id, "owner": self._entity_brief(acct.owner_id),
                "bank": acct.bank, "matches": len(rows), "totals": dict(sorted(totals.items())),
                "lines": [self._txn_line(t, account_id) for t in reversed(rows[-limit:])]}

    def check_watchlist(self, name: Annotated[str, Field(max_length=MAX_NAME_CHARS)]) -> dict:
        """Screen a name against the sanctions, PEP and adverse-media lists. Returns every
        entry whose name is similar; similarity is not identity, so compare date of birth,
        nationality, country and ID number before treating a hit as a match.

        Args:
            name: Full name of a person or company.

        Returns:
            Similar entries with their list, country, date of birth and detail.
        """
        query = _norm_name(name)
        if len(query) < 3:
            raise ToolInputError("invalid_argument", "name must have at least 3 letters")
        hits = []
        q_tokens, q_letters = set(query.split()), Counter(query)
        for w, w_name, w_tokens, w_letters in self._watchlist:
            overlap = len(q_tokens & w_tokens) / max(1, min(len(q_tokens), len(w_tokens)))
            # The exact ratio only counts where it can reach 0.8 (and then exceed the overlap
            # term, itself below 1 * 0.9): the length bound (difflib's real_quick_ratio) and
            # the letters in common (its quick_ratio, the same number) bound it from above,
            # cheapest first, so most entries never need it.
            score, total = 0.0, len(query) + len(w_name)
            if 2.0 * min(len(query), len(w_name)) / total >= 0.8 \
                    and 2.0 * (q_letters & w_letters).total() / total >= 0.8:
                matcher = self._matcher(w_name)
                matcher.set_seq1(query)
                score = matcher.ratio()
            similarity = max(score, overlap * 0.9)
            if similarity >= 0.8:
                hits.append({"entry_id": w.id, "list": w.list, "name": w.name,
                             "country": w.country, "date_of_birth": w.date_of_birth,
                             "nationality": w.nationality, "id_number": w.id_number,
                             "detail": w.detail, "listed_on": w.listed_on,
                             "similarity": round(similarity, 2)})
        hits.sort(key=lambda h: (-h["similarity"], h["entry_id"]))
        return {"query": name, "hits": [_compact(h) for h in hits[:10]]}

    def trace_network(self, entity_id: EntityId) -> dict:
        """Map who an entity transacts with in this bank's ledger: each counterparty with
        counts and USD totals in each direction and the channels used.

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            Counterparties ordered by volume (top 15).
        """
        own = {a.id for a in self.ix.accounts_of[entity_id]}
        agg: dict[str, dict[str, Any]] = {}
        for acct in own:
            for t in self.ix.txns_of_account[acct]:
                incoming = t.to_account in own
                other = t.from_account if incoming else t.to_account
                if other is None or other in own:
                    continue
                owner = self.ix.accounts[other].owner_id
                row = agg.setdefault(other, {**self._entity_brief(owner), "account_id": other,
                                             "bank": self.ix.accounts[other].bank,
                                             "n_in": 0, "usd_in": 0.0, "n_out": 0,
                                             "usd_out": 0.0, "channels": set()})
                key = "in" if incoming else "out"
                row[f"n_{key}"] += 1
                row[f"usd_{key}"] = round(row[f"usd_{key}"] + t.amount_usd, 2)
                row["channels"].add(t.channel)
        rows = sorted(agg.values(), key=lambda r: (-(r["usd_in"] + r["usd_out"]), r["account_id"]))
        for r in rows:
            r["channels"] = sorted(r["channels"])
        return {"entity": self._entity_brief(entity_id), "counterparties": rows[:15],
                "total_counterparties": len(rows)}

    def check_source_of_funds(self, entity_id: EntityId) -> dict:
        """Read the source-of-funds and source-of-wealth declarations on file for an entity,
        with each supporting document (kind, amount, date, counterparty).

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            Declarations on file (possibly none).
        """
        return {"entity": self._entity_brief(entity_id),
                # documents as a list, as they arrive over the wire (a dump keeps the tuple)
                "declarations": [_dump(s) | {"source_id": s.id,
                                             "documents": [_dump(d) for d in s.documents]}
                                 for s in self.ix.sof_of[entity_id]]}

    def check_market_price(self, commodity: str) -> dict:
        """Look up the market price band of a commodity on the case date.

        Args:
            commodity: Commodity name as written on trade documents, e.g. "cocoa beans".

        Returns:
            Low and high USD price per unit and the price source.
        """
        m = self.ix.prices.get(commodity.strip().lower())
        if m is None:
            raise ToolInputError("not_found", f"no market data for commodity {commodity!r}")
        return {"price_id": m.id, "commodity": m.commodity, "unit": m.unit,
                "low_usd": m.low_usd, "high_usd": m.high_usd, "as_of": m.as_of,
                "source": m.source}

    def assess_risk(self, entity_id: EntityId) -> dict:
        """Compute the bank's rule-based customer risk score for an entity from its case data:
        KYC rating, PEP status, jurisdiction, company age and address, staff, ownership,
        watchlist name hits, and activity in the alert window against expected activity.

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            Score 0-100, band, and the factors that contributed.
        """
        e = self.ix.entities[entity_id]
        as_of = date.fromisoformat(self.ix.case.as_of)
        factors: list[tuple[str, int]] = []

        def add(text: str, points: int) -> None:
            factors.append((text, points))

        if e.risk_rating in ("medium", "high"):
            add(f"KYC risk rating {e.risk_rating}", 15 if e.risk_rating == "high" else 5)
        if e.pep is not None:
            add(f"politically exposed: {e.pep.position} ({e.pep.country})", 20)
        if e.country in vocab.HIGH_RISK_JURISDICTIONS:
            add(f"jurisdiction {e.country} on a FATF list", 15)
        elif e.country in vocab.OFFSHORE_CENTRES:
            add(f"jurisdiction {e.country} is an offshore company-formation centre", 10)
        if e.incorporation_date:
            age = (as_of - date.fromisoformat(e.incorporation_date)).days
            if age < 365:
                add(f"incorporated {age} days before the case date", 10)
        if e.address.startswith("c/o"):
            add("registered address is care of a corporate service provider", 10)
        if e.kind == "company" and e.employees == 0:
            add("declares no employees", 10)
        if any(o.nominee for o in self._ownership_chain(entity_id)):
            add("ownership chain includes a nominee holding", 10)
        name = _norm_name(e.name)
        for w in self.ix.case.watchlist:
            if _norm_name(w.name) == name and w.list != "pep":
                # A name hit, not a match: comparing dates and countries is the
                # investigator's job (manual 4.3), never the score's.
                add(f"exact name on {w.list} list", 10)
        window_start = as_of.toordinal() - 30
        cash = wires = 0.0
        for a in self.ix.accounts_of[entity_id]:
            for t in self.ix.txns_of_account[a.id]:
                if date.fromisoformat(t.timestamp[:10]).toordinal() < window_start:
                    continue
                if t.channel == "cash" and t.to_account == a.id:
                    cash += t.amount_usd
                elif t.channel == "wire":
                    wires += t.amount_usd
        for label, actual, expected in (("cash deposits", cash, e.expected_monthly_cash_usd),
                                        ("wires", wires, e.expected_monthly_wires_usd)):
            if expected is not None and actual > 3 * max(expected, 1_000.0):
                add(f"{label} in last 30 days ${actual:,.0f} vs expected monthly "
                    f"${expected:,.0f}", 15)
        score = min(100, sum(p for _, p in factors))
        band = "high" if score >= 50 else "medium" if score >= 25 else "low"
        return {"entity": self._entity_brief(entity_id), "score": score, "band": band,
                "factors": [{"factor": f, "points": p} for f, p in factors]}

    def check_device_overlap(self, entity_id: EntityId) -> dict:
        """List the online-banking logins of an entity and of its accounts (who, device
        fingerprint, IP, time) and any other entity whose logins used the same device or IP.

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            The entity's logins and the other entities sharing a device or IP.
        """
        accounts = {a.id for a in self.ix.accounts_of[entity_id]}
        own = [d for d in self.ix.case.devices
               if d.entity_id == entity_id or d.account_id in accounts]
        parties = {entity_id} | {d.entity_id for d in own}
        shared: dict[str, dict[str, Any]] = {}
        # Every login on a device or IP an own login used, in the order of the own logins; a
        # device or IP already gone through adds nothing the second time (each step below is
        # idempotent), and an entity's logins mostly share one device and one IP.
        groups = dict.fromkeys(key for d in own for key in (("device", d.device_id),
                                                           ("ip", d.ip_address)))
        for kind, value in groups:
            logins = (self.ix.logins_by_device if kind == "device" else self.ix.logins_by_ip)
            for other in logins[value]:
                owner = self.ix.accounts[other.account_id].owner_id
                if other.account_id in accounts or {other.entity_id, owner} <= parties:
                    continue
                row = shared.get(other.entity_id)
                if row is None:
                    row = shared[other.entity_id] = {**self._entity_brief(other.entity_id),
                                                     "login_ids": [], "devices": set(),
                                                     "ips": set()}
                if other.id not in row["login_ids"]:
                    row["login_ids"].append(other.id)
                row["devices"].add(other.device_id)
                row["ips"].add(other.ip_address)
        for row in shared.values():
            row["devices"], row["ips"] = sorted(row["devices"]), sorted(row["ips"])
        return {"entity": self._entity_brief(entity_id),
                "logins": [{"login_id": d.id, "by": self._entity_brief(d.entity_id),
                            "account_id": d.account_id, "device_id": d.device_id,
                            "ip_address": d.ip_address, "timestamp": d.timestamp} for d in own],
                "shared_with": list(shared.values())}

    def verify_customs_invoice(self, invoice_id: InvoiceId) -> dict:
        """Reconcile an invoice: every trade document with the same shipment reference
        (invoices, customs declarations, bills of lading) and every payment that references
        an invoice of that shipment.

        Args:
            invoice_id: ID of the invoice (INV-...).

        Returns:
            The shipment's documents, payments, and counts of each document kind.
        """
        inv = self.ix.documents[invoice_id]
        docs = self.ix.docs_of_shipment[inv.shipment_ref]
        payments = [t for d in docs if d.kind == "invoice"
                    for t in self.ix.payments_of_invoice[d.id]]
        counts = {k: sum(d.kind == k for d in docs)
                  for k in ("invoice", "customs_declaration", "bill_of_lading")}
        return {"shipment_ref": inv.shipment_ref,
                "exporter": self._entity_brief(inv.exporter_id),
                "importer": self._entity_brief(inv.importer_id),
                "documents": [_compact(_dump(d, exclude={"exporter_id", "importer_id"})
                                       | {"document_id": d.id}) for d in docs],
                "document_counts": counts,
                "payments": [self._txn_line(t) for t in payments]}

    def _ownership_chain(self, entity_id: str, depth: int = 6):
        links, frontier, seen = [], [entity_id], {entity_id}
        for _ in range(depth):
            nxt = []
            for company in frontier:
                for link in self.ix.owners_of[company]:
                    links.append(link)
                    if link.owner_id not in seen:
                        seen.add(link.owner_id)
                        nxt.append(link.owner_id)
            frontier = nxt
        return links

    def query_beneficial_ownership(self, entity_id: EntityId) -> dict:
        """Walk the company registry upwards from an entity: each ownership link (owner,
        percent, nominee flag, since) layer by layer, the directors, and the entity's own
        holdings in other companies.

        Args:
            entity_id: ID of the entity (ENT-...).

        Returns:
            Ownership links with their layer, directors and holdings.
        """
        e = self.ix.entities[entity_id]
        layer_of = {entity_id: 0}
        chain = []
        for link in self._ownership_chain(entity_id):
            layer = layer_of[link.company_id] + 1
            layer_of.setdefault(link.owner_id, layer)
            chain.append({"link_id": link.id, "layer": layer,
                          "company": self._entity_brief(link.company_id),
                          "owner": self._entity_brief(link.owner_id), "percent": link.percent,
                          "nominee": link.nominee, "since": link.since})
        return {"entity": self._entity_brief(entity_id), "owners": chain,
                "directors": [self._entity_brief(d) for d in e.directors],
                "holdings": [{"link_id": o.id, "company": self._entity_brief(o.company_id),
                              "percent": o.percent, "nominee": o.nominee}
                             for o in self.ix.holdings_of[entity_id]]}

    # ---- operating system -------------------------------------------------------------------
    def write_to_case_file(self, note: str, evidence_ids: list[str] | None = None) -> dict:
        """Write a note to the case file on disk. Every case ID in the note text or in
        `evidence_ids` stays resident for the rest of the episode, and only evidence on disk
        counts in SAR findings.

        Args:
            note: The note text.
            evidence_ids: Case IDs the note records (IDs written in the text count too).

        Returns:
            The note number and the IDs now kept on disk.
        """
        if not note.strip():
            raise ToolInputError("invalid_argument", "note must not be empty")
        if len(note) > MAX_NOTE_CHARS:
            raise ToolInputError("invalid_argument", f"note exceeds {MAX_NOTE_CHARS} characters")
        if len(self.os.disk) >= MAX_NOTES:
            raise ToolInputError("disk_full", f"the case file holds at most {MAX_NOTES} notes")
        ids = frozenset(ID_PATTERN.findall(note)) | frozenset(evidence_ids or ())
        n = self.os.write_note(note, ids)
        return {"note_id": n.note_id, "ids_on_disk": sorted(ids),
                "notes_on_disk": len(self.os.disk)}

    def request_wire_trace(self, transaction_id: TransactionId) -> dict:
        """Ask the correspondent network to trace a wire transfer: onward hops after it left
        the bank, or the originating hops before it arrived. The result arrives asynchronously
        after a few steps; keep working and collect it with retrieve_async_result.

        Args:
            transaction_id: ID of a wire transaction (TXN-...).

        Returns:
            The job ID and the number of steps until the result is ready.
        """
        t = self.ix.transactions[transaction_id]
        if t.channel != "wire":
            raise ToolInputError("not_traceable", f"{transaction_id} is not a wire transfer")
        job = self.os.pending_job_for(transaction_id)
        if job is None:
            job = self.os.open_job(transaction_id, self._eta_for(transaction_id))
        return {"job_id": job.job_id, "transaction_id": transaction_id,
                "ready_at_step": job.ready_at_step,
                "ready_in_steps": max(0, job.ready_at_step - self.os.step)}

    def request_information(self, entity_id: EntityId, topic: InformationTopic) -> dict:
        """Ask the relationship manager to obtain information from a customer on one topic
        (a request for information). The customer's answer arrives asynchronously after a few
        steps; keep working and collect it with retrieve_async_result. Answers are the
        customer's own account: documents they send, or none.

        Args:
            entity_id: ID of the customer (ENT-...).
            topic: One of source_of_funds, related_parties, device_use, identity, trade_terms,
                authority.

        Returns:
            The job ID and the number of steps until the answer is ready.
        """
        job = self.os.pending_job_for(None, entity_id, topic)
        if job is None:
            job = self.os.open_job(None, self._eta_for(f"{entity_id}|{topic}"), entity_id, topic)
        return {"job_id": job.job_id, "entity_id": entity_id, "topic": topic,
                "ready_at_step": job.ready_at_step,
                "ready_in_steps": max(0, job.ready_at_step - self.os.step)}

    def retrieve_async_result(self, job_id: str) -> dict:
        """Collect the result of an async job once it is ready: the hops of a wire trace, or
        the customer's answer to a request for information. Polling before it is ready is an
        async timeout (penalised) and the job stays pending.

        Args:
            job_id: ID of the job returned by request_wire_trace or request_information (JOB-n).

        Returns:
            The hops of the traced wire, or the answer with any documents sent.
        """
        job = self.os.jobs.get(job_id)
        if job is None:
            raise ToolInputError("unknown_job", f"unknown job {job_id!r}")
        if self.os.step < job.ready_at_step:
            raise ToolInputError("not_ready", f"{job_id} is not ready; ready at step "
                                              f"{job.ready_at_step} (now {self.os.step})")
        job.retrieved = True
        if job.transaction_id is None:
            return self._answer(job_id, job.entity_id or "", job.topic or "")
        hops = self.ix.hops_of[job.transaction_id]
        return {"job_id": job_id, "transaction_id": job.transaction_id,
                "hops": [_dump(h, exclude={"transaction_id"}) | {"hop_id": h.id}
                         for h in sorted(hops, key=lambda h: h.sequence)]}

    def _answer(self, job_id: str, entity_id: str, topic: str) -> dict:
        reply = self.ix.replies.get((entity_id, topic))
        out = {"job_id": job_id, "entity": self._entity_brief(entity_id), "topic": topic}
        if reply is None:
            return out | {"statement": "The bank has no relationship manager for this party; "
                                       "no information was obtained.", "documents": []}
        return out | {"reply_id": reply.id, "statement": reply.statement,
                      "documents": [_compact(_dump(d)) for d in reply.documents]}

    def search_compliance_manual(self, query: str) -> dict:
        """Search the compliance manual (BM25 ranking) and return the best sections with a
        snippet each. Load a section with update_system_prompt to read and cite it.

        Args:
            query: Words to search for, e.g. "cash deposits below reporting threshold".

        Returns:
            Up to five ranked sections: ID, title, snippet and score.
        """
        if not query.strip():
            raise ToolInputError("invalid_argument", "query must not be empty")
        return {"query": query, "results": [
            {"section_id": sid, "title": title, "snippet": snippet, "score": score}
            for sid, title, snippet, score in _manual_hits(query)]}

    def update_system_prompt(self, section_id: str) -> dict:
        """Load a manual section into the kernel (the system prompt). The kernel holds a few
        sections; loading beyond capacity evicts the oldest. Only loaded sections count as
        citations in the final decision.

        Args:
            section_id: Manual section number, e.g. "2.1".

        Returns:
            The sections now loaded and the one evicted, if any.
        """
        section_id = section_id.strip().lstrip("§").strip()
        if section_id not in SECTIONS:
            raise ToolInputError("not_found", f"no manual section {section_id!r}")
        evicted = None
        if section_id not in self.os.kernel:
            evicted = self.os.load_section(section_id)
        return {"loaded": list(self.os.kernel), "evicted": evicted,
                "capacity": self.os.kernel_capacity}

    # ---- terminal -------------------------------------------------------------------------
    def file_sar(self, subjects: list[str], typology: Typology, findings: list[Finding],
                 cited_sections: list[str], narrative: str) -> Decision:
        """File a Suspicious Activity Report and end the investigation.

        Args:
            subjects: Entity IDs of the persons and companies the SAR names.
            typology: One of structuring, layering, trade_based, funnel_account, loan_back,
                sanctions_evasion, real_estate, elder_exploitation.
            findings: Red flags, each {"code": <red-flag code>, "evidence_ids": [<IDs>]};
                evidence counts only if you saw it and wrote it to the case file.
            cited_sections: Manual sections relied on; only sections loaded in the kernel count.
            narrative: Free-text narrative (who, what, when, where, why, how).

        Returns:
            The filing; the episode ends and is scored.
        """
        return Decision("file_sar", tuple(dict.fromkeys(subjects)), typology, tuple(findings),
                        tuple(dict.fromkeys(cited_sections)), narrative)

    def close_alert(self, reason: str, cited_sections: list[str]) -> Decision:
        """Close the alert without a SAR and end the investigation.

        Args:
            reason: Why the activity is explained (facts reviewed, guidance applied).
            cited_sections: Manual sections relied on; only sections loaded in the kernel count.

        Returns:
            The closure; the episode ends and is scored.
        """
        return Decision("close_alert", cited_sections=tuple(dict.fromkeys(cited_sections)),
                        text=reason)


# ---- declarations -> every interface ---------------------------------------------------------

# `declare` checks that the toolkit's public methods are exactly the wire's TOOL_NAMES.
_OS_TOOLS = ("write_to_case_file", "request_wire_trace", "request_information",
             "retrieve_async_result",
             "search_compliance_manual", "update_system_prompt")
TOOLS: dict[str, ToolSpec] = declare(
    Toolkit, TOOL_NAMES,
    lambda name: "os" if name in _OS_TOOLS else "terminal" if name in ("file_sar", "close_alert")
    else "investigation")


def prompt_tool_list() -> str:
    """The tool list for an LLM prompt, derived from the declarations."""
    return prompt_list(TOOLS)
