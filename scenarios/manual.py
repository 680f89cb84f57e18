"""The bank's compliance manual: numbered sections, and the closed list of red-flag codes.

Figures are stated in our own words and cite the regulation or public guidance by number
(31 USC = United States Code title 31; 31 CFR = Code of Federal Regulations title 31; FFIEC
BSA/AML Examination Manual; FATF Recommendations and trade-based ML indicators). Several
sections are irrelevant to any given alert on purpose: an investigator has to choose what to
load into a three-section kernel.

`RED_FLAG_CODES` is the closed list SAR findings must use (the typology labels a SAR may
carry are `scenarios.model.TYPOLOGIES`).
"""

from __future__ import annotations

from dataclasses import dataclass

from memex.scenarios.model import TYPOLOGIES

CTR_THRESHOLD_USD = 10_000.0
SAR_THRESHOLD_SUSPECT_USD = 5_000.0
SAR_THRESHOLD_NO_SUSPECT_USD = 25_000.0
SAR_FILING_DAYS = 30
SAR_FILING_DAYS_NO_SUSPECT = 60
TRAVEL_RULE_THRESHOLD_USD = 3_000.0
BENEFICIAL_OWNER_PERCENT = 25.0
OFAC_AGGREGATE_OWNERSHIP_PERCENT = 50.0
# A price more than this share beyond the FOB band (after deducting freight from a CIF price)
PRICE_DEVIATION_TOLERANCE = 0.05
# A document explains a flow when its amount is within this share of it.
DOCUMENT_MATCH_TOLERANCE = 0.04
# The weighing rule (1.7, 9.1): a SAR when at least this many independent checks stay
# unexplained after explanations on file and requests for information were sought.
SAR_MIN_UNEXPLAINED = 2

# Figures of the typology sections (11.x), stated once.
FUNNEL_MIN_DEPOSITS = 10
FUNNEL_MIN_LOCATIONS = 3
FUNNEL_MIN_TOTAL_USD = 15_000.0
FUNNEL_SENT_ON_SHARE = 0.70
LOAN_MIN_USD = 150_000.0
LOAN_LOOKBACK_DAYS = 45
GTO_PURCHASE_THRESHOLD_USD = 300_000.0
ELDER_MIN_AGE = 65
ELDER_ACTIVITY_MULTIPLE = 3.0


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    text: str


RED_FLAG_CODES: dict[str, str] = {
    "CASH_BELOW_CTR_THRESHOLD": "Repeated cash transactions just below the $10,000 CTR threshold.",
    "MULTI_BRANCH_CASH": "Cash split across several branches or days in a short window.",
    "MULTIPLE_DEPOSITORS": "Several different people depositing cash into one account.",
    "CASH_INCONSISTENT_WITH_PROFILE": "Cash volume out of line with declared income, turnover "
                                      "or expected activity.",
    "SHELL_COMPANY_INDICATORS": "Recently formed company with a formation-agent address, no "
                                "staff or operations and a vague business purpose.",
    "NOMINEE_OWNERSHIP": "Ownership held through nominees or layered companies hiding the "
                         "natural person in control.",
    "SHARED_DEVICE_ACROSS_ENTITIES": "The same device or IP address operating accounts of "
                                     "entities that claim to be unrelated.",
    "RAPID_PASS_THROUGH": "Funds received and sent on within days, leaving little balance.",
    "OFFSHORE_ONWARD_TRANSFER": "Onward transfers at other banks into offshore company "
                                "accounts, seen through a wire trace.",
    "ROUND_TRIP": "Funds that return, after hops, to the originator or a related party.",
    "PEP_UNEXPLAINED_WEALTH": "A politically exposed person receiving funds with no "
                              "documented source of wealth.",
    "SANCTIONS_MATCH": "A confirmed (not name-only) match against a sanctions list.",
    "ADVERSE_MEDIA": "Credible negative news about financial crime involving a party.",
    "OVER_INVOICING": "Invoiced unit price well above the market range.",
    "UNDER_INVOICING": "Invoiced unit price well below the market range.",
    "PHANTOM_SHIPMENT": "Payment against an invoice with no bill of lading or customs record.",
    "MULTIPLE_INVOICING": "One shipment invoiced and paid more than once.",
    "THIRD_PARTY_PAYMENT": "A trade invoice paid by a party that is not on the trade documents.",
    "HIGH_RISK_JURISDICTION": "A counterparty in a jurisdiction on a FATF list.",
    "UNSUPPORTED_SOURCE_OF_FUNDS": "A declared source of funds whose supporting document does "
                                   "not match the amount of the activity it is said to explain.",
    "UNDISCLOSED_RELATED_PARTY": "A counterparty presented as independent that the company "
                                 "registry shows the subject owns.",
    "FUNNEL_ACCOUNT_ACTIVITY": "Deposits into one account from many branches or senders, "
                               "moved on within days.",
    "LOAN_BACK": "A loan or investment whose funds trace back to a company the borrower owns.",
    "BLOCKED_AGGREGATE_OWNERSHIP": "A counterparty owned 50 percent or more in aggregate by "
                                   "confirmed blocked persons.",
    "TRANSSHIPMENT_HUB": "High-priority goods traded with a counterparty in a known "
                         "transshipment jurisdiction.",
    "ALL_CASH_PROPERTY_PURCHASE": "Real property bought without bank financing, paid by wire "
                                  "to a title or escrow agent.",
    "UNEXPLAINED_PURCHASE_FUNDS": "Funds for a property purchase that the documents on file "
                                  "do not explain.",
    "ELDER_ACTIVITY_CHANGE": "A sudden change in an older customer's outgoing payments to a "
                             "new payee.",
    "PAYEE_NOT_AUTHORISED": "An older customer's payee who is not the attorney-in-fact named "
                            "on the customer's file.",
}


_SECTIONS: tuple[tuple[str, str, str], ...] = (
    # 1. Reporting obligations
    ("1.1", "Currency Transaction Reports (CTR)",
     "A bank files a Currency Transaction Report for each deposit, withdrawal, exchange or other "
     "payment in currency of more than $10,000 in one business day (31 CFR 1010.311). Multiple "
     "cash transactions by or on behalf of the same person are aggregated when the bank knows of "
     "them and they total more than $10,000 in a business day (31 CFR 1010.313). The CTR is due "
     "within 15 calendar days of the transaction (31 CFR 1010.306). A cash deposit over $10,000 "
     "with a CTR on file is a reported, not a hidden, transaction."),
    ("1.2", "Suspicious Activity Report thresholds",
     "A bank must file a SAR for a transaction conducted by, at or through the bank that involves "
     "or aggregates at least $5,000 when a suspect can be identified and the bank knows, suspects "
     "or has reason to suspect the funds derive from illegal activity, the transaction is designed "
     "to evade Bank Secrecy Act requirements (including structuring), or it has no business or "
     "apparent lawful purpose (31 CFR 1020.320). Without an identifiable suspect the threshold is "
     "$25,000. Insider abuse is reportable at any amount."),
    ("1.3", "SAR filing deadlines and continuing activity",
     "The SAR is due within 30 calendar days after the initial detection of facts that may "
     "constitute a basis for filing. If no suspect is identified, filing may be delayed a further "
     "30 days to identify one, but never beyond 60 days from detection (31 CFR 1020.320(b)(3)). "
     "For continuing activity, review the account 90 days after a filing and file a continuing "
     "SAR within 120 days of the previous one if the activity persists."),
    ("1.4", "SAR confidentiality",
     "A SAR, and any information that would reveal its existence, is confidential. Staff must not "
     "tell a subject that a SAR was filed or is being considered (31 USC 5318(g)(2)). Requests "
     "for SARs from outside law enforcement or supervisors are escalated to the BSA Officer."),
    ("1.5", "Record retention",
     "Keep SARs and their supporting documentation for five years from the filing date, and CTRs "
     "and funds-transfer records for five years (31 CFR 1010.430). Supporting documentation is "
     "deemed filed with the SAR and must be produced on request of FinCEN or law enforcement."),
    ("1.6", "Closing an alert without a SAR",
     "An alert may be closed when the investigation explains the activity: the facts reviewed "
     "show a lawful purpose consistent with the customer's profile and history, and no red flag "
     "remains unexplained. The closing rationale must name the facts reviewed and the manual "
     "guidance applied. An alert is never closed because review was incomplete."),
    ("1.7", "Weighing anomalies: explanations and findings",
     "Most alerts are false positives, and most anomalies have an innocent explanation. An "
     "anomaly is two views that disagree: a document whose amount is off the flow, a device "
     "shared with a party outside the registry, a name hit with the customer's own date of "
     "birth, a related counterparty, a price outside the market band. Before it counts, look for "
     "its explanation: on file first (FX margin and charges on the ledger, the household on the "
     "KYC file, ID numbers and nationality that clear a name hit, a filed related-party "
     "disclosure, a successor appointment, the freight on a CIF bill of lading), then by a "
     "request for information to the relationship manager. An anomaly with a documented "
     "explanation is not a finding and is named in the closing rationale. An anomaly that stays "
     "unexplained is a finding; an evasive answer explains nothing. One unexplained anomaly "
     f"alone is noise; {SAR_MIN_UNEXPLAINED} or more unexplained anomalies in independent "
     "checks support a SAR (9.1)."),
    # 2. Structuring
    ("2.1", "Structuring (31 USC 5324)",
     "Structuring is breaking up cash transactions to evade the CTR requirement, for example "
     "several deposits of $9,000 to $9,900 on consecutive days or at different branches. It is a "
     "federal crime under 31 USC 5324 whether or not the underlying funds are lawful. Amounts "
     "clustered just below $10,000, split across days, branches and people, are the indicator "
     "that opens the review; decide on what the rest of the file shows. A documented source "
     "that matches the deposits, a following wire that ends with an unrelated party and a "
     "namesake-only watchlist hit point to ordinary banking (8.1). A source document that does "
     "not match, funds that come back to the depositor's own companies, a device shared with "
     "an unrelated company or a confirmed listing point to placement, and are reported."),
    ("2.2", "Structuring red flags and how to evidence them",
     "Cite CASH_BELOW_CTR_THRESHOLD with the deposit transactions themselves; MULTI_BRANCH_CASH "
     "with deposits made at different branches or split over days; MULTIPLE_DEPOSITORS when "
     "different people conduct deposits into one account (smurfing), citing those deposits. "
     "Aggregate the deposits in the alert window and compare with $10,000 per business day."),
    ("2.3", "Cash activity inconsistent with the customer profile",
     "Compare cash volume with the KYC profile: occupation, declared annual income or turnover, "
     "and the expected monthly cash recorded at onboarding. Cash far above what the stated "
     "occupation or business explains supports CASH_INCONSISTENT_WITH_PROFILE; cite the customer "
     "and the deposits. A salaried employee depositing tens of thousands in cash is a classic "
     "example. A sales summary, tax return or bill of sale on file whose amount does not match "
     "the deposits supports UNSUPPORTED_SOURCE_OF_FUNDS; cite the document."),
    ("2.4", "Monetary instrument purchases",
     "Cash purchases of bank cheques, drafts, cashier's cheques, money orders or traveller's "
     "cheques between $3,000 and $10,000 inclusive require identification and a record of the "
     "purchase (31 CFR 1010.415). Serial purchases just below $3,000 are a structuring "
     "indicator for instrument purchases."),
    # 3. Customer due diligence
    ("3.1", "Customer due diligence (CDD) core elements",
     "The CDD rule (31 CFR 1010.230 and 1020.210) has four elements: identify and verify the "
     "customer; identify and verify the beneficial owners of legal-entity customers; understand "
     "the nature and purpose of the relationship to build a customer risk profile; and conduct "
     "ongoing monitoring to report suspicious activity and keep customer information current."),
    ("3.2", "Beneficial ownership: the 25 percent and control prongs",
     "For each legal-entity customer identify every individual who directly or indirectly owns "
     "25 percent or more of the equity, plus one individual with significant responsibility to "
     "control or direct it, such as a CEO or managing member (31 CFR 1010.230(d)). Ownership held "
     "through other companies is traced to natural persons. A transparent, disclosed ownership "
     "chain with named owners is a mitigating fact. Compare the registry with the alerted "
     "counterparties: a counterparty presented as independent that the subject owns supports "
     "UNDISCLOSED_RELATED_PARTY; cite the ownership link. Holdings that are not counterparties "
     "are unremarkable."),
    ("3.3", "Nominees and layered ownership",
     "Nominee shareholders or directors, bearer arrangements and chains of companies in several "
     "jurisdictions can hide the natural person in control. Look through each layer to the "
     "ultimate beneficial owner. Ownership that resolves only through nominees supports "
     "NOMINEE_OWNERSHIP; cite the ownership links."),
    ("3.4", "Shell company indicators",
     "FinCEN guidance on shell companies (FIN-2006-G014) and FATF typologies list: recent "
     "incorporation, a registered address at a company-formation agent, no employees or physical "
     "operations, a vague purpose such as general trading or consultancy, directors who serve "
     "many companies, incorporation in an offshore centre, and turnover that appears suddenly. "
     "Several together support SHELL_COMPANY_INDICATORS; cite the company."),
    ("3.5", "Customer risk rating and enhanced due diligence",
     "Customers are rated low, medium or high risk from product, geography, occupation or "
     "business type and expected activity. High-risk customers receive enhanced due diligence: "
     "source of funds, more frequent review and senior approval. A high rating is a reason to "
     "look closer, not evidence of suspicious activity."),
    ("3.6", "Shared devices and IP addresses",
     "Online-banking sessions record a device fingerprint and IP address. The same device or IP "
     "operating accounts of customers who present as unrelated suggests common control and "
     "supports SHARED_DEVICE_ACROSS_ENTITIES; cite the login records. Shared devices within one "
     "household or one company's staff, or between a customer and a company the registry shows "
     "it owns, are expected: check the ownership links and the household members named on the "
     "KYC file (or ask the customer) before drawing a conclusion."),
    # 4. Sanctions and adverse media
    ("4.1", "OFAC screening and blocking",
     "Transactions and parties are screened against OFAC's Specially Designated Nationals list. "
     "Liability is strict. Property of a blocked person is blocked and reported to OFAC within 10 "
     "business days; rejected transactions are reported within 10 business days as well "
     "(31 CFR 501.603 and 501.604)."),
    ("4.2", "The OFAC 50 Percent Rule",
     "An entity owned 50 percent or more, directly or indirectly, individually or in aggregate, "
     "by one or more blocked persons is itself blocked, even if it is not named on the list. "
     "Ownership is added across blocked owners; control without ownership does not trigger the "
     "rule by itself."),
    ("4.3", "Dispositioning a potential watchlist match",
     "A name hit is not a match. Compare the full name and spelling variants, date of birth, "
     "nationality or country, and address. A different date of birth or country with a similar "
     "name is a false positive and is documented as such. The same date of birth is not yet a "
     "match: compare the ID number (passport or registration number) and nationality with the "
     "KYC file, or request the customer's identity document when the file has none; a different "
     "number clears the hit. Cite SANCTIONS_MATCH only for a confirmed match of the same person "
     "or entity."),
    ("4.4", "Adverse media",
     "Credible reporting that a party is investigated, charged or convicted for fraud, "
     "corruption, money laundering or sanctions evasion supports ADVERSE_MEDIA when the article "
     "is about the same person (same name, country and date of birth where given). Unrelated "
     "namesakes and rumours do not count."),
    # 5. Politically exposed persons
    ("5.1", "Who is a politically exposed person",
     "A senior foreign political figure (31 CFR 1010.605), a current or former senior official "
     "of a government, party or state-owned enterprise, and their immediate family and close "
     "associates. FATF Recommendation 12 extends this to domestic PEPs and international "
     "organisations. PEP status is a risk factor, not an allegation."),
    ("5.2", "Enhanced due diligence for PEPs",
     "Enhanced due diligence for a PEP relationship establishes the source of wealth and the "
     "source of the funds in each "
     "significant transaction, obtain senior management approval, and monitor the relationship "
     "more closely. Large transfers are matched to documents: sale deeds, probate records, "
     "audited accounts, employment contracts. The same test applies to any customer whose "
     "activity rests on a declared source: a document whose amount is far from the flow it "
     "explains supports UNSUPPORTED_SOURCE_OF_FUNDS (PEP_UNEXPLAINED_WEALTH for a PEP); one "
     "that matches it within 4 percent explains the flow. A document 5 to 15 percent above the "
     "flow is explained when FX margin and charges on the customer's ledger (or the conversion "
     "advice the customer sends on request) account for the difference."),
    ("5.3", "PEP transfers with a documented source of wealth",
     "A large transfer to or from a PEP is consistent with the relationship when a verifiable "
     "document on file explains it: the amount, date and counterparty of the transfer match the "
     "document, for example the proceeds of a property sale paid by the buyer's escrow agent. "
     "When the document matches and the other checks hold (the trace does not lead back to the "
     "PEP's own companies, the watchlist hit is a namesake), the alert is closed with that "
     "rationale."),
    ("5.4", "PEP funds with no documented source",
     "Funds reaching a PEP, or a company the PEP owns, from offshore companies or intermediaries "
     "with no declared or documented source, or with a source that does not match the amounts, "
     "supports PEP_UNEXPLAINED_WEALTH. Cite the PEP's source-of-funds record and the transfers. "
     "Grand-corruption schemes route state money through look-alike companies before it reaches "
     "the PEP or associates."),
    # 6. Trade-based money laundering
    ("6.1", "Trade-based money laundering overview",
     "Trade-based money laundering disguises value transfer through trade transactions: "
     "misrepresenting price, quantity or quality, or inventing shipments (FATF 2006 study; "
     "FATF-Egmont Trade-based Money Laundering Risk Indicators, 2021). Reconcile payments with "
     "invoices, customs declarations and bills of lading, and prices with market data."),
    ("6.2", "Over- and under-invoicing",
     "Compare the invoiced unit price with the market range for the commodity and date. A price "
     "more than 5 percent above the market high supports OVER_INVOICING; more than 5 percent "
     "below the market low supports UNDER_INVOICING. Market bands are free on board (FOB): a "
     "CIF price includes freight and insurance, so deduct the freight shown on the bill of "
     "lading (or the freight invoice) before comparing. Cite the invoice and the market price. "
     "Prices inside the band, net of freight, are not a red flag."),
    ("6.3", "Phantom shipments",
     "A payment against an invoice for goods with no bill of lading and no customs declaration "
     "for that shipment suggests the goods never moved. Supports PHANTOM_SHIPMENT; cite the "
     "invoice and the payment."),
    ("6.4", "Multiple invoicing",
     "Two or more invoices for the same shipment (same bill of lading or shipment reference), "
     "each paid, supports MULTIPLE_INVOICING. Cite the invoices, the bill of lading and the "
     "payments."),
    ("6.5", "Third-party payments",
     "Payment of a trade invoice by a party that appears on none of the trade documents, "
     "especially one in an unrelated jurisdiction, supports THIRD_PARTY_PAYMENT. Cite the "
     "payment and the invoice."),
    ("6.6", "Trade with high-risk jurisdictions",
     "Trade with a counterparty in a jurisdiction on a FATF list calls for enhanced due "
     "diligence and supports HIGH_RISK_JURISDICTION as a risk factor. On its own it is not "
     "suspicious: when the documents reconcile, prices sit within the market range, the payment "
     "does not come back to the customer's own companies and the partner is not one of them, the "
     "alert is closed with that rationale."),
    ("6.7", "Reconciling trade documents",
     "For each shipment match the invoice, customs declaration and bill of lading: commodity, "
     "quantity, unit, parties, dates, ports and vessel. Then match each payment to one invoice. "
     "Discrepancies are recorded against the document identifiers."),
    # 7. Layering and funds transfers
    ("7.1", "Layering through pass-through accounts",
     "Layering moves funds through accounts and companies to distance them from their source. "
     "Funds received and sent on within a few days, often split across several beneficiaries, "
     "with little balance retained, support RAPID_PASS_THROUGH. Cite the incoming and outgoing "
     "transfers."),
    ("7.2", "Onward transfers to offshore centres",
     "A wire trace through the correspondent bank shows what happened after the funds left. "
     "Onward hops into accounts of companies in offshore centres support "
     "OFFSHORE_ONWARD_TRANSFER; cite the trace hops. The bank's own ledger never shows these "
     "hops."),
    ("7.3", "Round-tripping",
     "Funds that leave and, after several hops, return to the originator or to a party related "
     "to it suggest fabricated turnover or concealment of the source. Supports ROUND_TRIP; cite "
     "the hops that close the loop."),
    ("7.4", "Funds-transfer recordkeeping and the Travel Rule",
     "For funds transfers of $3,000 or more the originator's bank must record and pass on the "
     "originator's name, address, account and the beneficiary's details "
     "(31 CFR 1010.410(e) and (f)). Missing originator information on incoming wires is "
     "followed up with the sending bank."),
    ("7.5", "Correspondent banking due diligence",
     "Foreign correspondent accounts require due diligence and, for certain foreign banks, "
     "enhanced due diligence (31 USC 5318(i)); accounts for foreign shell banks are prohibited "
     "(31 USC 5318(j)). Nested relationships are identified."),
    ("7.6", "Wire traces",
     "A trace request goes to the correspondent network and returns asynchronously with each "
     "onward or originating hop: bank, beneficiary, amount and value date. Keep working the "
     "case while a trace is pending and retrieve it once it is due."),
    # 8. Legitimate high-volume activity
    ("8.1", "Cash-intensive businesses",
     "Restaurants, convenience stores, laundromats, car washes and similar businesses deposit "
     "cash daily, and people sell cars, win at casinos and inherit cash. Deposits explained by a "
     "matching document on file (sales summary, tax return, bill of sale), including deposits "
     "above $10,000 for which CTRs were filed and runs of deposits just under $10,000 that the "
     "documents account for, are expected and are not by themselves suspicious (FFIEC BSA/AML "
     "Examination Manual, cash-intensive businesses). Suspicion arises when the documents do not "
     "match the deposits, or when another check fails: the cash comes back to the customer's own "
     "companies, the device is shared with an unrelated company, or a listing is confirmed. With "
     "no such sign the alert is closed citing this section."),
    ("8.2", "Payroll and supplier disbursements",
     "An established operating company that receives customer payments and pays many employees "
     "or suppliers shortly afterwards is running payroll, not layering, when the number of "
     "recipients fits its headcount, the recipients are its staff or long-standing suppliers, "
     "its owners are disclosed, its receipts are documented, and neither the registry nor a wire "
     "trace shows the money returning to companies it owns. Close with that rationale."),
    ("8.3", "CTR exemptions",
     "Banks may exempt certain customers from CTR filing: other banks, government agencies, "
     "listed companies and, after two months and designation, some non-listed businesses and "
     "payroll customers (31 CFR 1020.315). Exemptions do not relieve SAR obligations."),
    # 9. Decisions and SAR content
    ("9.1", "Decision standard",
     "File a SAR when, after review, the bank knows, suspects or has reason to suspect that the "
     "activity involves illicit funds, is designed to evade reporting, or has no apparent lawful "
     "purpose. Close the alert when the facts explain the activity. Missing a true suspicious "
     "case is the most serious error; filing on activity the facts explain is also an error. "
     f"The weighing rule (1.7): file when at least {SAR_MIN_UNEXPLAINED} independent checks "
     "stay unexplained after "
     "the explanations on file and a request for information were sought; otherwise close and "
     "name the explanations found."),
    ("9.2", "SAR narrative",
     "The narrative answers who, what, when, where, why and how, names every subject with "
     "identifiers, lists the transactions with dates and amounts, and explains why the activity "
     "is suspicious. Findings cite red-flag codes with the evidence identifiers that support "
     "them."),
    ("9.3", "Red-flag catalogue",
     "Findings use only these codes: " + ", ".join(RED_FLAG_CODES) + ". Each finding lists the "
     "identifiers of the records that evidence it. Typology labels: " + ", ".join(TYPOLOGIES)
     + "."),
    ("9.4", "Identifying subjects",
     "Subjects are the persons and entities that conducted the activity or benefited from it, "
     "including the ultimate beneficial owner behind companies. Counterparties with no role in "
     "the scheme, and unrelated namesakes, are not subjects."),
    # 10. Other programme areas (rarely relevant to a monitoring alert)
    ("10.1", "Elder financial exploitation",
     "Sudden withdrawals by an elderly customer, new authorised signers, or a caregiver taking "
     "control of accounts may indicate exploitation (FinCEN advisory FIN-2022-A002). Use the "
     "term ELDER FINANCIAL EXPLOITATION in the SAR narrative. Alerts under rule TM-ELDER-09 "
     "are worked under 11.10 to 11.12."),
    ("10.2", "Cheque kiting",
     "Kiting exploits float between accounts at different banks: cheques are written and "
     "deposited back and forth to inflate balances before they clear. Look for round-number "
     "cheques between the same accounts and frequent uncollected-funds overdrafts."),
    ("10.3", "Casinos and card clubs",
     "Casinos file a CTR-C for cash in or cash out over $10,000 in a gaming day and keep "
     "multiple-transaction logs. Chip walking and minimal gaming with large cash buy-ins are "
     "red flags specific to gaming."),
    ("10.4", "Convertible virtual currency and money services businesses",
     "Exchangers and administrators of convertible virtual currency are money transmitters and "
     "must register with FinCEN as MSBs (FIN-2019-G001). Unregistered peer-to-peer exchangers "
     "using personal accounts are a red flag."),
    ("10.5", "Marijuana-related businesses",
     "FinCEN guidance FIN-2014-G001 sets SAR expectations for marijuana-related businesses: "
     "marijuana limited, priority and termination SARs."),
    ("10.6", "Human trafficking indicators",
     "FinCEN advisory FIN-2020-A008 lists financial indicators such as payments for many "
     "short hotel stays, rent for multiple units paid by one person, and wages funnelled to a "
     "third party. Use HUMAN TRAFFICKING FIN-2020-A008 in the narrative."),
    ("10.7", "Cyber events",
     "Cyber-enabled crime and cyber events that affect transactions, such as account "
     "takeovers, are reportable; include IP addresses, timestamps and device identifiers."),
    ("10.8", "BSA/AML training",
     "All staff receive annual BSA/AML training tailored to their role, covering red flags, "
     "escalation and confidentiality; the BSA Officer keeps attendance records and tests "
     "comprehension."),
    ("10.9", "Information sharing under sections 314(a) and 314(b)",
     "Respond to FinCEN 314(a) requests within 14 days; 314(b) voluntary sharing with other "
     "financial institutions requires annual registration with FinCEN."),
    ("10.10", "Insider abuse",
     "Suspected abuse by a director, officer or employee is reportable regardless of amount "
     "(31 CFR 1020.320(a)(2)(i)) and is escalated to the board rather than to the management "
     "chain."),
    ("10.11", "Funnel accounts",
     "Cash deposited in one region and withdrawn quickly in another, often by different people, "
     "may indicate a funnel account used for trade or drug proceeds (FIN-2014-A005). Alerts "
     "under rule TM-FUNNEL-05 are worked under 11.1 and 11.2."),
    ("10.12", "Account takeover and ACH fraud",
     "Changed contact details followed by new payees and outgoing ACH to unfamiliar accounts "
     "suggest account takeover; verify with the customer through a known channel."),
    # 11. Further typologies and their look-alikes
    ("11.1", "Funnel accounts and money mules",
     f"Rule TM-FUNNEL-05 fires on {FUNNEL_MIN_DEPOSITS} or more deposits from "
     f"{FUNNEL_MIN_LOCATIONS} or more branches or senders totalling more than "
     f"${FUNNEL_MIN_TOTAL_USD:,.0f} in 30 days, with {FUNNEL_SENT_ON_SHARE:.0%} or more sent on "
     "within 5 days (FinCEN FIN-2014-A005; FBI and FinCEN money-mule guidance). The pattern "
     "alone is not suspicious. File a SAR when the declared business does not explain the "
     "deposits (5.2), the outgoing wire ends at a company the customer controls (7.3), or the "
     "account is run from a device that also runs unrelated accounts (3.6). Cite "
     "FUNNEL_ACCOUNT_ACTIVITY with the deposits and RAPID_PASS_THROUGH with the wires out."),
    ("11.2", "Dispersed receipts with a documented business",
     "Marketplace sellers, franchise operators and travelling salespeople are paid from many "
     "places and pay suppliers soon after. Close a TM-FUNNEL-05 alert when a payout statement, "
     "commission statement or franchise sales report matches the deposits within 4 percent, "
     "or the other views all hold; record which document was matched."),
    ("11.3", "Round-tripping and loan-back",
     f"Rule TM-LOAN-06 fires on a loan drawdown or capital contribution of "
     f"${LOAN_MIN_USD:,.0f} or more received within {LOAN_LOOKBACK_DAYS} days of an outgoing "
     "transfer of at least half that amount. In a loan-back the customer's own money, sent "
     "out through related companies, returns as a loan or investment (FATF, Money Laundering "
     "Using Trust and Company Service Providers, 2010; FATF-Egmont, Concealment of Beneficial "
     "Ownership, 2018). Cite LOAN_BACK when the origin trace of the loan ends at a company the "
     "customer owns; UNDISCLOSED_RELATED_PARTY when the registry shows it owning the lender."),
    ("11.4", "Intra-group funding, cash pooling and shareholder loans",
     "Groups sweep cash to a pool and back, shareholders lend to their companies, and "
     "investors subscribe for shares. Close a TM-LOAN-06 alert when the loan, cash-pooling or "
     "subscription agreement matches the amount within 4 percent, or the loan's origin and "
     "the lender's ownership are independent of the customer."),
    ("11.5", "Sanctions evasion through front companies and transshipment",
     "Rule TM-SANC-07 fires on trade payments of $25,000 or more in 30 days for Common High "
     "Priority List goods with a counterparty in a transshipment jurisdiction (FinCEN and BIS "
     "joint alerts FIN-2022-A003 and FIN-2023-NTCA002: the UAE, Turkiye, Armenia, Georgia, "
     "Kazakhstan, Kyrgyzstan and Hong Kong among others). The hub alone is not a violation. "
     "File when the partner is blocked under the 50 Percent Rule (11.6), is the customer's own "
     "company, or the proceeds return to the customer. Cite TRANSSHIPMENT_HUB with the "
     "payments."),
    ("11.6", "Adding up blocked ownership",
     "Under OFAC's guidance of 13 August 2014 an entity is blocked when blocked persons own 50 "
     "percent or more of it, directly or indirectly, in aggregate. Query the counterparty's "
     "owners, screen each owner, and confirm a hit by date of birth (4.3); add the "
     "percentages of confirmed owners only. 50 percent or more: cite "
     "BLOCKED_AGGREGATE_OWNERSHIP with the ownership links and the list entries. Under 50 "
     "percent, or a namesake: not blocked, document the computation."),
    ("11.7", "Hub trade that clears screening",
     "Trade through a transshipment jurisdiction is lawful when the partner is not blocked, "
     "is independent of the customer and the funds do not return. Close a TM-SANC-07 alert "
     "with the owners screened and their confirmed holdings under 50 percent, or the other "
     "views all holding."),
    ("11.8", "Real estate bought with unexplained funds",
     f"Rule TM-RE-08 fires on a payment of ${GTO_PURCHASE_THRESHOLD_USD:,.0f} or more to a "
     "title, escrow or settlement agent funded by transfers in the prior 30 days, the "
     "threshold of FinCEN's residential real-estate geographic targeting orders for purchases "
     "by legal entities without bank financing (see also advisory FIN-2017-A003). Cite "
     "ALL_CASH_PROPERTY_PURCHASE with the purchase, and UNEXPLAINED_PURCHASE_FUNDS when the "
     "documents on file do not match the funds within 4 percent."),
    ("11.9", "Documented property purchases",
     "A purchase is explained when a sale deed of a previous property, an investment "
     "statement, a signed gift letter from the relative who sent the funds or a members' "
     "agreement matches the funds within 4 percent, or when "
     "the funders are independent and the funds do not trace back to the buyer. Close a "
     "TM-RE-08 alert citing the document matched."),
    ("11.10", "Elder financial exploitation",
     f"Rule TM-ELDER-09 fires for a customer aged {ELDER_MIN_AGE} or over whose outgoing "
     f"payments in 30 days exceed {ELDER_ACTIVITY_MULTIPLE:.0f} times the prior six months' "
     "monthly average, to a payee first paid in the window. FinCEN advisory FIN-2022-A002 "
     "lists sudden changes in activity, new caregivers, relatives or online contacts "
     "receiving funds, and access from new devices. Cite ELDER_ACTIVITY_CHANGE with the "
     "payments; PAYEE_NOT_AUTHORISED when the power of attorney names someone else (11.12)."),
    ("11.11", "Family support and attorney payments",
     "Payments by an older customer to a relative or an appointed attorney-in-fact are "
     "expected when a durable power of attorney on file names that payee, the devices on the "
     "account are the customer's or a company it owns, and screening of the payee clears. "
     "Close a TM-ELDER-09 alert citing the document."),
    ("11.12", "Powers of attorney",
     "A durable power of attorney names the agent who may act on the customer's accounts. "
     "Compare the agent's name with the payee of the alerted payments: the agent acting "
     "within the mandate explains them; a payee who is not the named agent does not, and "
     "supports PAYEE_NOT_AUTHORISED with the document."),
)

SECTIONS: dict[str, Section] = {sid: Section(sid, title, text) for sid, title, text in _SECTIONS}


def section(section_id: str) -> Section:
    """Look up one section by its number; raises KeyError for an unknown number."""
    return SECTIONS[section_id]
