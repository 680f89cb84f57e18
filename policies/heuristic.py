"""The heuristic investigator: an AML analyst written as a script that uses only observations
(the agent the server offers at `POST /episodes/{id}/agent-step`, and the demonstrator of the
trainer's warm start). It never reads the case object or its ground truth.

A monitoring rule says only that a pattern fired, so the analyst decides on cross-checks: each
compares two independent views and either corroborates the customer's story or breaks it.

| check | view 1 (tool) | view 2 (tool) | breaks when |
|---|---|---|---|
| source of funds | documents (check_source_of_funds) | the alerted inflow | no amount within 25% |
| trace | last hop (retrieve_async_result) | holdings (query_beneficial_ownership) | a holding |
| device | co-users (check_device_overlap) | holdings | a co-user is not a holding |
| watchlist | entries (check_watchlist) | KYC date (get_customer_profile) | an entry has that date |
| holdings | holdings | the alerted counterparties | a counterparty is a holding |
| price | invoice (verify_customs_invoice) | band (check_market_price) | >25% beyond the band |
| 50% rule | partner's owners (ownership) | their screens + profiles | confirmed hold >= 50% |
| authority | power of attorney (check_source_of_funds) | the alerted payee | names another |
| payee watchlist | entries on the payee | payee's date (get_customer_profile) | same date |

It files a SAR when any cross-check fails and closes the alert otherwise. Each failing check's
carrier records (the mismatched document, the closing hop, the co-user's logins, the confirming
entry, the ownership link, the customs declaration and the band) are written to the case file
the step after the tool returns them, while they are still in RAM, so it never pays a page
fault. The red flags the alert itself shows (cash just below the CTR threshold, several
branches or depositors, pass-through, a high-risk jurisdiction) join the findings only when a
cross-check has failed: the alert opens the review, it does not decide it (manual 2.1).

Manual sections come from a fixed map an analyst knows from the manual's table of contents:
the rule's SAR section (2.1, 7.1, 6.1, 5.4) and each failing check's section for a SAR; the
rule's closing section (8.1, 8.2, 6.6, 5.3) and the sections of the checks that held for a
closure. The wire trace is requested first and collected once it is due, so the wait costs
no steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memex.policies.scripted import ScriptedPolicy, act
from memex.scenarios.manual import (
    CTR_THRESHOLD_USD,
    OFAC_AGGREGATE_OWNERSHIP_PERCENT,
    PRICE_DEVIATION_TOLERANCE,
)

CASH, FLOW, TRADE, PEP = "TM-CASH-01", "TM-FLOW-02", "TM-TRADE-03", "TM-PEP-04"
FUNNEL, LOAN, HUB, PROPERTY, ELDER = ("TM-FUNNEL-05", "TM-LOAN-06", "TM-SANC-07", "TM-RE-08",
                                      "TM-ELDER-09")
TYPOLOGY = {CASH: "structuring", FLOW: "layering", TRADE: "trade_based", PEP: "layering",
            FUNNEL: "funnel_account", LOAN: "loan_back", HUB: "sanctions_evasion",
            PROPERTY: "real_estate", ELDER: "elder_exploitation"}
SAR_SECTION = {CASH: "2.1", FLOW: "7.1", TRADE: "6.1", PEP: "5.4", FUNNEL: "11.1",
               LOAN: "11.3", HUB: "11.5", PROPERTY: "11.8", ELDER: "11.10"}
CLOSE_SECTION = {CASH: "8.1", FLOW: "8.2", TRADE: "6.6", PEP: "5.3", FUNNEL: "11.2",
                 LOAN: "11.4", HUB: "11.7", PROPERTY: "11.9", ELDER: "11.11"}
SOURCE_OF_FUNDS, TRACE, DEVICE, WATCHLIST, HOLDINGS, PRICE = (
    "source_of_funds", "trace", "device", "watchlist", "holdings", "price")
AGGREGATE_OWNERSHIP, AUTHORITY, PAYEE_WATCHLIST = (
    "aggregate_ownership", "authority", "payee_watchlist")
# The code a failed source-of-funds check or a trace back to the customer carries, by rule.
SOF_CODE = {PEP: "PEP_UNEXPLAINED_WEALTH", PROPERTY: "UNEXPLAINED_PURCHASE_FUNDS"}
TRACE_CODE = {LOAN: "LOAN_BACK"}
# Manual sections that support a failed check, and those that document one that held.
FAIL_SECTION = {SOURCE_OF_FUNDS: "5.2", TRACE: "7.3", DEVICE: "3.6", WATCHLIST: "4.4",
                HOLDINGS: "3.2", PRICE: "6.2", AGGREGATE_OWNERSHIP: "11.6",
                AUTHORITY: "11.12", PAYEE_WATCHLIST: "4.4"}
HELD_SECTION = {SOURCE_OF_FUNDS: "5.2", TRACE: "7.6", DEVICE: "3.6", WATCHLIST: "4.3",
                HOLDINGS: "3.2", PRICE: "6.2", AGGREGATE_OWNERSHIP: "11.6",
                AUTHORITY: "11.12", PAYEE_WATCHLIST: "4.3"}
# When more checks held than the kernel has room for, the closure cites the ones whose
# explanation is most specific: a matching document or band first, the registry last.
CLOSE_PREFERENCE = (SOURCE_OF_FUNDS, AUTHORITY, PRICE, AGGREGATE_OWNERSHIP, TRACE, DEVICE,
                    PAYEE_WATCHLIST, WATCHLIST, HOLDINGS)
POWER_OF_ATTORNEY = "durable power of attorney"
KERNEL_SECTIONS = 3
# A document explains a flow when its amount is within this factor of it (fees, gross-ups).
DOCUMENT_MATCH_FACTOR = 1.25
# Manual 6.2: more than 25 percent beyond the band (read multiplicatively on both sides).
PRICE_FACTOR = 1.0 + PRICE_DEVIATION_TOLERANCE
NEAR_CTR_USD = 1_500.0  # "just below" the CTR threshold (manual 2.1: $9,000 to $9,900 and so on)


@dataclass
class CheckResult:
    """What one cross-check found: whether it ran on real data, whether the story broke, and
    the records that carry the break."""

    name: str
    present: bool
    failed: bool = False
    code: str | None = None
    carriers: list[str] = field(default_factory=list)
    implicated: list[str] = field(default_factory=list)


class Heuristic(ScriptedPolicy):
    """An analyst who cross-checks every view the rule's cases can break, writes what breaks
    to the case file, loads the manual sections that support the outcome and decides."""

    name = "heuristic"

    def script(self, obs):
        a = self.alert
        self.obs = obs
        self.disk: set[str] = set()
        self.checks: dict[str, CheckResult] = {}
        self.surface: dict[str, list[str]] = {}
        rule = a["rule"]["code"]
        subject = a["subject"]["entity_id"]
        accounts = set(a["account_ids"])
        txns = a["transactions"]

        self.surface = self._surface_flags(rule, txns, [])
        payee = next((t for t in txns if t["from_account"] in accounts
                      and t.get("to_party_id")), None) if rule == ELDER else None
        if payee is not None:  # its ID is needed after the alert page has left RAM
            yield from self.keep("Payee under review", [payee["to_party_id"]])
        job = None if rule == ELDER else (yield from self._request_trace(rule, txns, accounts))
        if rule == TRADE:
            yield from self._price_check(txns)
        if rule == HUB:
            yield from self._aggregate_ownership_check(subject, txns)
        owners = (yield from self.call("query_beneficial_ownership", entity_id=subject)) or {}
        holdings = {h["company"]["entity_id"]: h for h in owners.get("holdings", [])}
        directors = [d["entity_id"] for d in owners.get("directors", [])]
        self.surface = self._surface_flags(rule, txns, directors)
        yield from self._holdings_check(subject, txns, holdings)
        yield from self._device_check(subject, directors, holdings)
        if rule == ELDER:  # an older customer's outflows: who may receive them, and who that is
            if payee is not None:
                yield from self._authority_check(subject, payee)
                yield from self._payee_watchlist_check(payee)
        elif rule not in (TRADE, HUB):  # trade payments are explained by trade documents
            yield from self._source_of_funds_check(rule, subject, txns, accounts)
        if rule != ELDER:
            yield from self._watchlist_check(a["subject"])
        if job is not None:
            yield from self._trace_check(job, subject, a["subject"]["name"], holdings,
                                         TRACE_CODE.get(rule, "ROUND_TRIP"))

        failed = [c for c in self.checks.values() if c.failed]
        if not failed:
            held = [c for c in CLOSE_PREFERENCE if self.checks.get(c) and self.checks[c].present]
            sections = [CLOSE_SECTION.get(rule, "1.6")] + [HELD_SECTION[c] for c in held]
            cited = yield from self._load(sections)
            yield act("close_alert", cited_sections=cited, reason=self._closing_reason(held))
            return
        sections = [SAR_SECTION.get(rule, "9.1")] + [FAIL_SECTION[c.name] for c in failed]
        cited = yield from self._load(sections)
        findings = [{"code": c.code, "evidence_ids": [i for i in c.carriers if i in self.disk]}
                    for c in failed]
        findings += [{"code": code, "evidence_ids": [i for i in ids if i in self.disk]}
                     for code, ids in self.surface.items()]
        findings = self._merge([f for f in findings if f["evidence_ids"]])
        subjects = [subject, *(i for c in failed for i in c.implicated)]
        ubo = self._ultimate_owner(owners)
        if ubo:
            subjects.append(ubo)
        yield act("file_sar", subjects=list(dict.fromkeys(subjects)),
                  typology=TYPOLOGY.get(rule, "layering"), findings=findings,
                  cited_sections=cited, narrative=self._narrative(failed))

    # ---- OS helpers -------------------------------------------------------------------------
    def call(self, tool: str, **arguments: Any):
        """Take one action; returns its result (None on error) and keeps `self.obs` current."""
        self.obs = yield act(tool, **arguments)
        return self.obs.result if self.obs.error is None else None

    def resident(self) -> set[str]:
        ctx = self.obs.context
        return {i for p in ctx.ram for i in p.ids} | {i for n in ctx.disk for i in n.ids}

    def keep(self, note: str, ids: list[str]):
        """Write the IDs among `ids` that are resident and not yet on disk (one step, if any).
        Alert IDs are always resident; everything else is written while its page is in RAM."""
        resident = self.resident() | self._alert_ids()
        new = [i for i in dict.fromkeys(ids) if i and i not in self.disk and i in resident]
        if new:
            yield from self.call("write_to_case_file", note=note, evidence_ids=new)
            if self.obs.error is None:
                self.disk |= set(new)

    def _alert_ids(self) -> set[str]:
        a = self.alert
        return {a["alert_id"], a["subject"]["entity_id"], *a["account_ids"],
                *(t["id"] for t in a["transactions"])}

    def _fail(self, check: CheckResult, note: str):
        """Record a broken story and keep its carriers — with the alert's own red-flag records,
        which now join the SAR — on disk."""
        self.checks[check.name] = check
        surface = [i for ids in self.surface.values() for i in ids]
        yield from self.keep(note, check.carriers + surface)

    def _load(self, sections: list[str]):
        sections = list(dict.fromkeys(sections))[:KERNEL_SECTIONS]
        for sid in sections:
            yield from self.call("update_system_prompt", section_id=sid)
        loaded = {s.section_id for s in self.obs.context.kernel}
        return [s for s in sections if s in loaded]

    # ---- the wire trace: requested first, collected when due ------------------------------
    def _request_trace(self, rule: str, txns: list[dict], accounts: set[str]):
        """Ask for the trace of the wire the rule's story turns on: the largest payout of a
        fan-out, the first trade payment, the PEP transfer, or the wire that followed the
        cash (found in the ledger)."""
        wire = None
        if rule == CASH:
            start = self.alert["window"]["start"]
            ledger = (yield from self.call("query_transactions",
                                           account_id=self.alert["account_ids"][0],
                                           channel="wire", start_date=start, limit=20)) or {}
            outs = [t for t in ledger.get("lines", []) if t["direction"] == "out"]
            wire = max(outs, key=lambda t: (t["amount_usd"], t["id"]), default=None)
        else:
            wires = [t for t in txns if t["channel"] == "wire"]
            if rule in (FLOW, FUNNEL):
                outs = [t for t in wires if t["from_account"] in accounts]
                wire = max(outs, key=lambda t: (t["amount_usd"], t["id"]), default=None)
            elif rule in (LOAN, PROPERTY):  # where the loan or the purchase money came from
                ins = [t for t in wires if t["to_account"] in accounts]
                wire = max(ins, key=lambda t: (t["amount_usd"], t["id"]), default=None)
            else:
                wire = min(wires, key=lambda t: (t["timestamp"], t["id"]), default=None)
        if wire is None:
            return None
        return (yield from self.call("request_wire_trace", transaction_id=wire["id"]))

    def _trace_check(self, job: dict, subject: str, name: str, holdings: dict[str, dict],
                     code: str = "ROUND_TRIP"):
        while self.obs.step + 1 < job["ready_at_step"]:  # rare: every other check ran meanwhile
            yield from self.call("assess_risk", entity_id=subject)
        result = (yield from self.call("retrieve_async_result", job_id=job["job_id"])) or {}
        hops = sorted(result.get("hops", []), key=lambda h: h["sequence"])
        # The first hop is the wire's own counterparty; the trace tells something only when
        # the money moved on (or came from) further than that.
        check = CheckResult(TRACE, present=len(hops) > 1)
        if not check.present:
            self.checks[TRACE] = check
            return
        last = hops[-1]
        own_names = {h["company"]["name"] for h in holdings.values()}
        party = last.get("party_id")
        if party in holdings or party == subject or last["party_name"] in own_names | {name}:
            check.failed, check.code = True, code
            check.carriers = [last["hop_id"]]
            check.implicated = [party] if party and party != subject else []
            yield from self._fail(check, f"Wire trace ends at {last['party_name']}, a company "
                                         f"the customer owns: hop {last['hop_id']}.")
        else:
            self.checks[TRACE] = check

    # ---- cross-checks -----------------------------------------------------------------------
    def _price_check(self, txns: list[dict]):
        """Invoice unit price vs the commodity's market band (while the alert page, which
        names the invoices, is still in RAM)."""
        invoice_id = next((t["reference"] for t in txns if t.get("reference")), None)
        if invoice_id is None:
            return
        shipment = (yield from self.call("verify_customs_invoice", invoice_id=invoice_id)) or {}
        docs = shipment.get("documents", [])
        invoice = next((d for d in docs if d["document_id"] == invoice_id), None)
        if not invoice or not invoice.get("unit_price_usd"):
            return
        band = (yield from self.call("check_market_price", commodity=invoice["commodity"])) or {}
        if not band:
            return
        check = CheckResult(PRICE, present=True)
        unit = invoice["unit_price_usd"]
        over, under = unit > band["high_usd"] * PRICE_FACTOR, unit < band["low_usd"] / PRICE_FACTOR
        if over or under:
            check.failed = True
            check.code = "OVER_INVOICING" if over else "UNDER_INVOICING"
            customs = [d["document_id"] for d in docs if d["kind"] == "customs_declaration"]
            check.carriers = [*customs, band["price_id"], invoice_id]
            check.implicated = [p["entity_id"] for p in (shipment.get("exporter"),
                                                         shipment.get("importer"))
                                if p and p["entity_id"] != self.alert["subject"]["entity_id"]]
            yield from self._fail(check, f"Invoiced {unit:,.2f} per unit vs market "
                                         f"{band['low_usd']:,.2f}-{band['high_usd']:,.2f}.")
        else:
            self.checks[PRICE] = check

    def _holdings_check(self, subject: str, txns: list[dict], holdings: dict[str, dict]):
        """Registry holdings vs the alerted counterparties."""
        counterparties = {p for t in txns for p in (t.get("from_party_id"), t.get("to_party_id"))
                          if p and p != subject}
        related = [h for cid, h in holdings.items() if cid in counterparties]
        check = CheckResult(HOLDINGS, present=bool(holdings) and bool(counterparties))
        if related:
            check.failed, check.code = True, "UNDISCLOSED_RELATED_PARTY"
            check.carriers = [h["link_id"] for h in related]
            check.implicated = [h["company"]["entity_id"] for h in related]
            yield from self._fail(check, "The registry shows the customer owning an alerted "
                                         "counterparty: " + ", ".join(check.carriers))
        else:
            self.checks[HOLDINGS] = check

    def _device_check(self, subject: str, directors: list[str], holdings: dict[str, dict]):
        """Co-users of the customer's devices vs the companies the registry says it owns."""
        overlap = (yield from self.call("check_device_overlap", entity_id=subject)) or {}
        shared = overlap.get("shared_with", [])
        insiders = {subject, *directors, *holdings}
        unrelated = [s for s in shared if s["entity_id"] not in insiders]
        check = CheckResult(DEVICE, present=bool(shared))
        if unrelated:
            check.failed, check.code = True, "SHARED_DEVICE_ACROSS_ENTITIES"
            check.carriers = [i for s in unrelated for i in s["login_ids"]]
            check.implicated = [s["entity_id"] for s in unrelated]
            yield from self._fail(check, "Device shared with unrelated "
                                         + ", ".join(s["name"] for s in unrelated))
        else:
            self.checks[DEVICE] = check

    def _source_of_funds_check(self, rule: str, subject: str, txns: list[dict],
                               accounts: set[str]):
        """Declared source-of-funds documents vs the alerted inflow."""
        flow = sum(t["amount_usd"] for t in txns if t["to_account"] in accounts)
        sof = (yield from self.call("check_source_of_funds", entity_id=subject)) or {}
        docs = [d for s in sof.get("declarations", []) for d in s["documents"]
                if d.get("amount_usd")]
        check = CheckResult(SOURCE_OF_FUNDS, present=bool(docs) and flow > 0)
        if not check.present:
            self.checks[SOURCE_OF_FUNDS] = check
            return
        if any(1 / DOCUMENT_MATCH_FACTOR <= d["amount_usd"] / flow <= DOCUMENT_MATCH_FACTOR
               for d in docs):
            self.checks[SOURCE_OF_FUNDS] = check
            return
        check.failed = True
        check.code = SOF_CODE.get(rule, "UNSUPPORTED_SOURCE_OF_FUNDS")
        check.carriers = [d["id"] for d in docs]
        yield from self._fail(check, f"Documents on file do not explain ${flow:,.0f}: "
                                     + ", ".join(f"{d['id']} ${d['amount_usd']:,.0f}"
                                                 for d in docs))

    def _watchlist_check(self, subject: dict):
        """Sanctions and news entries on the customer's name vs its KYC date of birth or
        incorporation. A person is screened by full name and by surname, so spelling and
        first-name variants are dispositioned too (manual 4.3)."""
        person = subject["kind"] == "person"
        queries = [subject["name"]]
        surname = subject["name"].split()[-1]
        if person and len(surname) >= 3 and surname != subject["name"]:
            queries.append(surname)
        hits: dict[str, dict] = {}
        for query in queries:
            screen = (yield from self.call("check_watchlist", name=query)) or {}
            hits.update((h["entry_id"], h) for h in screen.get("hits", []) if h["list"] != "pep")
        hits = list(hits.values())
        check = CheckResult(WATCHLIST, present=any(h["country"] == subject["country"]
                                                   for h in hits))
        if not hits:
            self.checks[WATCHLIST] = check
            return
        profile = (yield from self.call("get_customer_profile",
                                        entity_id=subject["entity_id"])) or {}
        own_date = profile.get("date_of_birth" if person else "incorporation_date")
        confirmed = [h for h in hits if own_date and h.get("date_of_birth") == own_date]
        if not confirmed:
            self.checks[WATCHLIST] = check
            return
        check.present = check.failed = True
        check.code = ("ADVERSE_MEDIA" if confirmed[0]["list"] == "adverse_media"
                      else "SANCTIONS_MATCH")
        check.carriers = [h["entry_id"] for h in confirmed]
        yield from self._fail(check, f"Watchlist entry {confirmed[0]['entry_id']} carries the "
                                     f"customer's own date {own_date}: a confirmed match.")

    def _aggregate_ownership_check(self, subject: str, txns: list[dict]):
        """The trading partner's registry owners, each screened and confirmed by date of
        birth; confirmed owners' percentages added up (OFAC 50 Percent Rule, manual 11.6)."""
        partner = next((p for t in txns for p in (t.get("from_party_id"), t.get("to_party_id"))
                        if p and p != subject), None)
        if partner is None:
            return
        registry = (yield from self.call("query_beneficial_ownership", entity_id=partner)) or {}
        owners = [o for o in registry.get("owners", []) if o["layer"] == 1
                  and o["owner"]["kind"] == "person"]
        check = CheckResult(AGGREGATE_OWNERSHIP, present=bool(owners))
        if not owners:
            self.checks[AGGREGATE_OWNERSHIP] = check
            return
        yield from self.keep("Partner's owners", [i for o in owners
                                                  for i in (o["link_id"], o["owner"]["entity_id"])])
        confirmed: list[tuple[dict, str]] = []
        for o in owners:
            screen = (yield from self.call("check_watchlist", name=o["owner"]["name"])) or {}
            hits = [h for h in screen.get("hits", []) if h["list"] == "sanctions"
                    and h["name"] == o["owner"]["name"]]
            if not hits:
                continue
            profile = (yield from self.call("get_customer_profile",
                                            entity_id=o["owner"]["entity_id"])) or {}
            match = next((h for h in hits if h.get("date_of_birth")
                          and h["date_of_birth"] == profile.get("date_of_birth")), None)
            if match is not None:
                confirmed.append((o, match["entry_id"]))
                yield from self.keep("Confirmed SDN owner", [match["entry_id"]])
        if sum(o["percent"] for o, _ in confirmed) >= OFAC_AGGREGATE_OWNERSHIP_PERCENT:
            check.failed, check.code = True, "BLOCKED_AGGREGATE_OWNERSHIP"
            check.carriers = [i for o, e in confirmed for i in (o["link_id"], e)]
            check.implicated = [partner]
            yield from self._fail(check, "Confirmed blocked owners hold "
                                         f"{sum(o['percent'] for o, _ in confirmed):.0f}% of "
                                         "the partner.")
        else:
            self.checks[AGGREGATE_OWNERSHIP] = check

    def _authority_check(self, subject: str, payee: dict):
        """The power of attorney on the customer's file vs the payee of the alerted payments."""
        sof = (yield from self.call("check_source_of_funds", entity_id=subject)) or {}
        poas = [d for s in sof.get("declarations", []) for d in s["documents"]
                if d["kind"] == POWER_OF_ATTORNEY]
        check = CheckResult(AUTHORITY, present=bool(poas))
        if not poas or any(d.get("counterparty") == payee["to_party"] for d in poas):
            self.checks[AUTHORITY] = check
            return
        check.failed, check.code = True, "PAYEE_NOT_AUTHORISED"
        check.carriers = [d["id"] for d in poas]
        check.implicated = [payee["to_party_id"]]
        yield from self._fail(check, f"The power of attorney names {poas[0].get('counterparty')}"
                                     f", not the payee {payee['to_party']}.")

    def _payee_watchlist_check(self, payee: dict):
        """Entries on the payee's name vs the payee's date of birth in the registry."""
        screen = (yield from self.call("check_watchlist", name=payee["to_party"])) or {}
        hits = [h for h in screen.get("hits", []) if h["list"] != "pep"]
        check = CheckResult(PAYEE_WATCHLIST, present=bool(hits))
        if not hits:
            self.checks[PAYEE_WATCHLIST] = check
            return
        profile = (yield from self.call("get_customer_profile",
                                        entity_id=payee["to_party_id"])) or {}
        confirmed = [h for h in hits if h.get("date_of_birth")
                     and h["date_of_birth"] == profile.get("date_of_birth")]
        if not confirmed:
            self.checks[PAYEE_WATCHLIST] = check
            return
        check.failed = True
        check.code = ("ADVERSE_MEDIA" if confirmed[0]["list"] == "adverse_media"
                      else "SANCTIONS_MATCH")
        check.carriers = [h["entry_id"] for h in confirmed]
        check.implicated = [payee["to_party_id"]]
        yield from self._fail(check, f"Watchlist entry {confirmed[0]['entry_id']} is the payee.")

    # ---- what the alert itself shows (reported only with a failed check) ---------------------
    def _surface_flags(self, rule: str, txns: list[dict], directors: list[str]) -> dict:
        subject = self.alert["subject"]
        flags: dict[str, list[str]] = {}
        if rule == CASH:
            deposits = [t for t in txns if t["channel"] == "cash"]
            near = [t["id"] for t in deposits
                    if CTR_THRESHOLD_USD - NEAR_CTR_USD <= t["amount_usd"] < CTR_THRESHOLD_USD]
            if len(near) >= 2:
                flags["CASH_BELOW_CTR_THRESHOLD"] = near
            if len({t.get("branch") for t in deposits}) > 1:
                flags["MULTI_BRANCH_CASH"] = [t["id"] for t in deposits]
            account_holder = subject["entity_id"] if subject["kind"] == "person" or not directors \
                else directors[0]
            others = [t["id"] for t in deposits if t.get("conducted_by") not in (
                None, account_holder)]
            if others:
                flags["MULTIPLE_DEPOSITORS"] = others
        elif rule == FLOW:
            flags["RAPID_PASS_THROUGH"] = [t["id"] for t in txns]
        elif rule == TRADE:
            flags["HIGH_RISK_JURISDICTION"] = [t["id"] for t in txns if t["channel"] == "wire"]
        elif rule == FUNNEL:
            accounts = set(self.alert["account_ids"])
            flags["FUNNEL_ACCOUNT_ACTIVITY"] = [t["id"] for t in txns
                                                if t["to_account"] in accounts]
            flags["RAPID_PASS_THROUGH"] = [t["id"] for t in txns]
        elif rule == HUB:
            flags["TRANSSHIPMENT_HUB"] = [t["id"] for t in txns if t["channel"] == "wire"]
        elif rule == PROPERTY:
            accounts = set(self.alert["account_ids"])
            flags["ALL_CASH_PROPERTY_PURCHASE"] = [t["id"] for t in txns
                                                   if t["from_account"] in accounts]
        elif rule == ELDER:
            flags["ELDER_ACTIVITY_CHANGE"] = [t["id"] for t in txns if t["channel"] != "cash"]
        return flags

    @staticmethod
    def _ultimate_owner(owners: dict) -> str | None:
        """The natural person at the top of the ownership chain, if the customer is a company."""
        people = [o for o in owners.get("owners", []) if o["owner"]["kind"] == "person"]
        if not people:
            return None
        return max(people, key=lambda o: o["layer"])["owner"]["entity_id"]

    @staticmethod
    def _merge(findings: list[dict]) -> list[dict]:
        out: dict[str, list[str]] = {}
        for f in findings:
            out.setdefault(f["code"], [])
            out[f["code"]] += [i for i in f["evidence_ids"] if i not in out[f["code"]]]
        return [{"code": c, "evidence_ids": ids[:40]} for c, ids in out.items()]

    @staticmethod
    def _closing_reason(held: list[str]) -> str:
        facts = {SOURCE_OF_FUNDS: "the document on file matches the alerted flow",
                 PRICE: "the invoiced price sits inside the market band",
                 TRACE: "the traced wire ends with an unrelated party",
                 DEVICE: "the shared device runs a company the registry shows the customer owns",
                 WATCHLIST: "the watchlist hit is a namesake with another date",
                 HOLDINGS: "none of the customer's holdings is an alerted counterparty",
                 AGGREGATE_OWNERSHIP: "the partner's confirmed blocked owners hold under 50 "
                                      "percent together",
                 AUTHORITY: "the power of attorney on file names the payee",
                 PAYEE_WATCHLIST: "the watchlist hit on the payee is a namesake"}
        if not held:
            return "No cross-check contradicts the customer's profile; the activity is explained."
        return "Explained: " + "; ".join(facts[c] for c in held) + "."

    @staticmethod
    def _narrative(failed: list[CheckResult]) -> str:
        return "The customer's account of the activity fails: " + "; ".join(
            f"{c.name.replace('_', ' ')} ({c.code}: {', '.join(c.carriers[:3])})"
            for c in failed) + "."
